/**
 * Test helpers that break one piece of a JSON document (which is `unknown` to the code under test):
 * `setAt(doc, 'fields.2.type', 'strin')`, `deleteAt(doc, 'fields.0.name')`.
 */
type Container = Record<string, unknown> | unknown[];

function parentOf(doc: unknown, path: string): { parent: Container; key: string } {
  const keys = path.split('.');
  let node = doc;
  for (const key of keys.slice(0, -1)) {
    node = (node as Record<string, unknown>)[key];
    if (typeof node !== 'object' || node === null)
      throw new Error(`test path ${path} leaves the document at ${key}`);
  }
  return { parent: node as Container, key: keys[keys.length - 1] };
}

export function setAt(doc: unknown, path: string, value: unknown): void {
  const { parent, key } = parentOf(doc, path);
  (parent as Record<string, unknown>)[key] = value;
}

export function deleteAt(doc: unknown, path: string): void {
  const { parent, key } = parentOf(doc, path);
  delete (parent as Record<string, unknown>)[key];
}

export function getAt(doc: unknown, path: string): unknown {
  const { parent, key } = parentOf(doc, path);
  return (parent as Record<string, unknown>)[key];
}
