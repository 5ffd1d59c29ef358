import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { NullableInteger } from './nullable-integer.ts';

describe('NullableInteger', () => {
  const schema = Type.Object({ ms: NullableInteger({ minimum: 1, maximum: 10 }) });

  it('is a JSON Schema type list, not anyOf', () => {
    expect(schema.properties.ms).toMatchObject({ type: ['integer', 'null'], minimum: 1, maximum: 10 });
    expect(schema.properties.ms).not.toHaveProperty('anyOf');
  });

  it('accepts null and integers in range, for TypeBox too', () => {
    for (const ms of [null, 1, 10]) expect(Value.Check(schema, { ms })).toBe(true);
    for (const ms of [0, 11, 1.5, '5', undefined]) expect(Value.Check(schema, { ms })).toBe(false);
  });
});
