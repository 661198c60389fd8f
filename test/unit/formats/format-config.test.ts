import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { parseFormatConfig } from '../../../functions/core/formats/format-config.js';

describe('parseFormatConfig', () => {
  it('defaults to JSON values with keys left raw', () => {
    expect(parseFormatConfig(undefined)).toEqual({ value: 'json' });
  });

  it('parses a Confluent route with basic auth and a default timeout', () => {
    // Prepare
    const raw = {
      value: 'confluent',
      key: 'string',
      registry: { url: 'https://sr.example.com/api/', basicAuth: 'u:p' },
    };
    // Act
    const config = parseFormatConfig(raw);
    // Assess
    expect(config).toEqual({
      value: 'confluent',
      key: 'string',
      registry: {
        url: 'https://sr.example.com/api/',
        basicAuth: 'u:p',
        bearerToken: undefined,
        timeoutMs: 5000,
      },
    });
  });

  it('parses glue settings', () => {
    const config = parseFormatConfig({
      value: 'glue',
      glue: { registryName: 'orders', region: 'eu-west-1' },
    });
    expect(config.glue).toEqual({ registryName: 'orders', region: 'eu-west-1' });
  });

  it.each([
    [
      { value: 'avro' },
      'routes[0].format.value: expected one of json, string, confluent, glue, auto, got "avro"',
    ],
    [
      { value: 'json', key: 7 },
      'routes[0].format.key: expected one of json, string, confluent, glue, auto, got 7',
    ],
    [{ value: 'confluent' }, "routes[0].format.registry: is required when value is 'confluent'"],
    [{ value: 'json', key: 'confluent' }, "routes[0].format.registry: is required when key is 'confluent'"],
    [{ value: 'confluent', registry: { url: 'ftp://x' } }, 'routes[0].format.registry.url: must be http'],
    [
      { value: 'confluent', registry: { url: 'not a url' } },
      "routes[0].format.registry.url: 'not a url' is not a URL",
    ],
    [
      { value: 'confluent', registry: {} },
      'routes[0].format.registry.url: missing; expected the registry URL',
    ],
    [
      { value: 'confluent', registry: { url: 'http://x', basicAuth: 'nocolon' } },
      'registry.basicAuth: must be "user:password"',
    ],
    [
      { value: 'confluent', registry: { url: 'http://x', basicAuth: 'a:b', bearerToken: 't' } },
      'routes[0].format.registry: set basicAuth or bearerToken, not both',
    ],
    [
      { value: 'confluent', registry: { url: 'http://x', timeoutMs: 0 } },
      'routes[0].format.registry.timeoutMs',
    ],
    [
      { value: 'confluent', registry: { url: 'http://x', timout: 5 } },
      "routes[0].format.registry.timout: unknown setting (did you mean 'timeoutMs'?)",
    ],
    [
      { value: 'json', regsitry: {} },
      "routes[0].format.regsitry: unknown setting (did you mean 'registry'?)",
    ],
    [
      { value: 'glue', glue: { registryName: '' } },
      'routes[0].format.glue.registryName: expected a non-empty string, got ""',
    ],
    ['json', 'routes[0].format: expected an object { value, key, registry, glue }, got "json"'],
  ])('refuses %j naming the field', (raw, message) => {
    // Act / Assess
    expect(() => parseFormatConfig(raw, 'routes[0].format')).toThrow(ValidationError);
    expect(() => parseFormatConfig(raw, 'routes[0].format')).toThrow(message);
  });
});
