import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  formatS3Location,
  fromFileUri,
  getLocationScheme,
  isWithinLocation,
  joinLocation,
  normalizeLocation,
  parentLocation,
  parseS3Location,
  toFileUri,
} from '../../../functions/core/io/location.js';

describe('getLocationScheme', () => {
  it('reads lower-cased schemes and leaves plain paths without one', () => {
    expect(getLocationScheme('s3://b/k')).toBe('s3');
    expect(getLocationScheme('S3A://b/k')).toBe('s3a');
    expect(getLocationScheme('file:///tmp/x')).toBe('file');
    expect(getLocationScheme('/tmp/a:b')).toBeUndefined();
    expect(getLocationScheme('relative/path')).toBeUndefined();
  });
});

describe('joinLocation', () => {
  it('joins with single slashes whatever slashes the parts carry', () => {
    expect(joinLocation('s3://bucket/warehouse/', '/db/', 'table', 'metadata/v1.json')).toBe(
      's3://bucket/warehouse/db/table/metadata/v1.json',
    );
    expect(joinLocation('file:///tmp/w', 'a')).toBe('file:///tmp/w/a');
    expect(joinLocation('/tmp/w', '', 'a')).toBe('/tmp/w/a');
  });

  it('keeps roots intact', () => {
    expect(joinLocation('s3://bucket/', 'k')).toBe('s3://bucket/k');
    expect(joinLocation('file:///', 'tmp')).toBe('file:///tmp');
    expect(joinLocation('/', 'tmp')).toBe('/tmp');
  });

  it('refuses segments that would escape the base', () => {
    expect(() => joinLocation('s3://b/t', '../other')).toThrow(ValidationError);
    expect(() => joinLocation('/w', 'a/./b')).toThrow(ValidationError);
  });
});

describe('parseS3Location', () => {
  it('splits bucket and key, keeping the scheme', () => {
    expect(parseS3Location('s3://bucket/a/b.json')).toEqual({
      scheme: 's3',
      bucket: 'bucket',
      key: 'a/b.json',
    });
    expect(parseS3Location('s3a://bucket/k')).toEqual({ scheme: 's3a', bucket: 'bucket', key: 'k' });
    expect(parseS3Location('s3://bucket')).toEqual({ scheme: 's3', bucket: 'bucket', key: '' });
    expect(parseS3Location('s3://bucket/')).toEqual({ scheme: 's3', bucket: 'bucket', key: '' });
  });

  it('round-trips through formatS3Location', () => {
    const location = 's3a://b/x/y%3Az';
    expect(formatS3Location(parseS3Location(location))).toBe(location);
  });

  it('rejects non-S3 locations and missing buckets', () => {
    expect(() => parseS3Location('file:///tmp/x')).toThrow(ValidationError);
    expect(() => parseS3Location('s3:///key')).toThrow(ValidationError);
    expect(() => parseS3Location('bucket/key')).toThrow(ValidationError);
  });
});

describe('toFileUri / fromFileUri', () => {
  it('round-trips absolute paths verbatim (no percent-coding)', () => {
    const path = '/tmp/w/ts=2024-01-01T00%3A00/a b.parquet';
    expect(toFileUri(path)).toBe(`file://${path}`);
    expect(fromFileUri(toFileUri(path))).toBe(path);
  });

  it('accepts the local URI spellings other engines write', () => {
    expect(fromFileUri('file:///tmp/x')).toBe('/tmp/x');
    expect(fromFileUri('file:/tmp/x')).toBe('/tmp/x');
    expect(fromFileUri('file://localhost/tmp/x')).toBe('/tmp/x');
    expect(fromFileUri('/tmp/x')).toBe('/tmp/x');
  });

  it('rejects relative paths, remote hosts and other schemes', () => {
    expect(() => toFileUri('tmp/x')).toThrow(ValidationError);
    expect(() => fromFileUri('tmp/x')).toThrow(ValidationError);
    expect(() => fromFileUri('file://server/share/x')).toThrow(ValidationError);
    expect(() => fromFileUri('file:relative')).toThrow(ValidationError);
    expect(() => fromFileUri('s3://b/k')).toThrow(ValidationError);
  });
});

describe('comparing locations', () => {
  it('spells each location one way', () => {
    expect(normalizeLocation('file:///w/t/')).toBe('/w/t');
    expect(normalizeLocation('s3a://b/w//t/')).toBe('s3://b/w/t');
    expect(normalizeLocation('s3://b/')).toBe('s3://b');
    expect(normalizeLocation('/')).toBe('/');
  });

  it('knows what lies under a folder, whatever the spelling, and no sibling that shares a prefix', () => {
    expect(isWithinLocation('file:///w/a/b/data/x', '/w/a/b/')).toBe(true);
    expect(isWithinLocation('/w/a/b', 'file:/w/a/b')).toBe(true);
    expect(isWithinLocation('s3a://b/w/t/x', 's3://b/w/t')).toBe(true);
    expect(isWithinLocation('/w/a/bc/x', '/w/a/b')).toBe(false);
    expect(isWithinLocation('/w/a', '/w/a/b')).toBe(false);
  });

  it('finds the folder holding a location, up to a root', () => {
    expect(parentLocation('s3://b/w/t/x')).toBe('s3://b/w/t');
    expect(parentLocation('s3://b/w')).toBe('s3://b');
    expect(parentLocation('s3://b')).toBeUndefined();
    expect(parentLocation('/w/t')).toBe('/w');
    expect(parentLocation('/w')).toBeUndefined();
  });
});
