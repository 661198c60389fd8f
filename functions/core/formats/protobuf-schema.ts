/**
 * `.proto` sources from a schema registry → protobufjs types, and the two ways serializers name the
 * message type inside a schema: Confluent's message-index path (declaration order, messages only)
 * and Glue's single index into the name-sorted list of every message type of the file (nested ones
 * and the map-entry types protoc synthesizes included).
 */
import protobuf from 'protobufjs';

/** Imports serializers treat as built in (never registered as references). */
const BUILT_IN_SOURCES: Record<string, string> = {
  'confluent/type/decimal.proto': `syntax = "proto3"; package confluent.type;
    message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }`,
  'google/type/date.proto': `syntax = "proto3"; package google.type;
    message Date { int32 year = 1; int32 month = 2; int32 day = 3; }`,
  'google/type/timeofday.proto': `syntax = "proto3"; package google.type;
    message TimeOfDay { int32 hours = 1; int32 minutes = 2; int32 seconds = 3; int32 nanos = 4; }`,
};
/** Imports that only define custom options; decoding never needs them. */
const OPTION_ONLY_IMPORTS = new Set(['google/protobuf/descriptor.proto', 'confluent/meta.proto']);
const PARSE_OPTIONS: protobuf.IParseOptions = { keepCase: true, alternateCommentMode: true };

export interface ProtobufSchema {
  /** The `.proto` source of the schema itself. */
  readonly source: string;
  /** The file's top-level message types, in declaration order (Confluent's first message index). */
  readonly messages: readonly protobuf.Type[];
  /** @throws Error when the indexes name no message type */
  typeByConfluentIndexes(indexes: number[]): protobuf.Type;
  /** @throws Error when the index names no message type */
  typeByGlueIndex(index: number): protobuf.Type;
}

function messagesOf(ns: protobuf.NamespaceBase): protobuf.Type[] {
  return ns.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type);
}

/** protoc's name for the entry type of map field `name` (`attrs_map` → `AttrsMapEntry`). */
export function mapEntryName(fieldName: string): string {
  let out = '';
  let capitalize = true;
  for (const ch of fieldName) {
    if (ch === '_') capitalize = true;
    else {
      out += capitalize && ch >= 'a' && ch <= 'z' ? ch.toUpperCase() : ch;
      capitalize = false;
    }
  }
  return `${out}Entry`;
}

/** Full name without protobufjs's leading dot, as protoc's descriptors spell it. */
function fullName(type: protobuf.ReflectionObject): string {
  return type.fullName.replace(/^\./, '');
}

/**
 * Glue's ordering: every message type of the file, level by level, plus synthesized map entries,
 * sorted by full name (Java `String.compareTo`, i.e. UTF-16 code units — as JS `<` compares).
 */
function glueOrder(top: protobuf.Type[]): Array<protobuf.Type | string> {
  const all: Array<[string, protobuf.Type | string]> = [];
  const queue = [...top];
  for (let type = queue.shift(); type; type = queue.shift()) {
    all.push([fullName(type), type]);
    for (const field of type.fieldsArray) {
      if (field.map)
        all.push([`${fullName(type)}.${mapEntryName(field.name)}`, `map entry of ${field.name}`]);
    }
    queue.push(...messagesOf(type));
  }
  all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return all.map(([, t]) => t);
}

/**
 * Parses a schema and its imports. `imports` maps an import path to its source (the registry's
 * references); well-known Google types, Confluent's decimal and google.type Date/TimeOfDay are built in.
 * @throws Error when the source does not parse, an import is missing, or a type does not resolve
 */
export function compileProtobufSchema(source: string, imports: ReadonlyMap<string, string>): ProtobufSchema {
  const root = new protobuf.Root();
  const main = protobuf.parse(source, root, PARSE_OPTIONS);
  // Captured before any import is parsed into the same root, so only this file's types count.
  const pkg = main.package ? root.lookup(main.package) : root;
  const top = pkg instanceof protobuf.Namespace || pkg instanceof protobuf.Root ? messagesOf(pkg) : [];
  if (top.length === 0) throw new Error('the schema declares no message type');

  const loaded = new Set<string>();
  const load = (names: string[] | undefined): void => {
    for (const name of names ?? []) {
      if (loaded.has(name)) continue;
      loaded.add(name);
      const common = protobuf.common.get(name);
      const text = imports.get(name) ?? BUILT_IN_SOURCES[name];
      if (imports.get(name) === undefined && common) {
        root.addJSON(common.nested ?? {});
      } else if (text !== undefined) {
        const parsed = protobuf.parse(text, root, PARSE_OPTIONS);
        load(parsed.imports);
        load(parsed.weakImports);
      } else if (!OPTION_ONLY_IMPORTS.has(name)) {
        throw new Error(`import "${name}" is neither among the schema's references nor built in`);
      }
    }
  };
  load(main.imports);
  load(main.weakImports);
  root.resolveAll();

  let sorted: Array<protobuf.Type | string> | undefined;
  return {
    source,
    messages: top,
    typeByConfluentIndexes(indexes) {
      let candidates = top;
      let type: protobuf.Type | undefined;
      for (const index of indexes) {
        type = candidates[index];
        if (!type)
          throw new Error(`message indexes [${indexes.join(', ')}] name no message type of the schema`);
        candidates = messagesOf(type);
      }
      if (!type) throw new Error('empty message indexes');
      return type;
    },
    typeByGlueIndex(index) {
      sorted ??= glueOrder(top);
      const type = sorted[index];
      if (type === undefined) throw new Error(`message index ${index} names no message type of the schema`);
      if (typeof type === 'string')
        throw new Error(`message index ${index} names the ${type}, not a message`);
      return type;
    },
  };
}
