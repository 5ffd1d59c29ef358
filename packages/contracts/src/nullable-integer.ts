import { Kind, Type, TypeRegistry, type IntegerOptions, type TUnsafe } from '@sinclair/typebox';

// Type.Union([Type.Integer(), Type.Null()]) becomes anyOf, which fast-json-stringify
// compiles with Ajv; inside a schema that nests an $id (ModelSchema's TensorSpec)
// that $id then resolves twice and the route fails to build. A type list
// (`['integer', 'null']`, JSON Schema 2020-12 / OpenAPI 3.1) serialises without Ajv.
if (!TypeRegistry.Has('NullableInteger')) {
  TypeRegistry.Set<IntegerOptions>(
    'NullableInteger',
    (schema, value) =>
      value === null ||
      (Number.isInteger(value) &&
        (schema.minimum === undefined || (value as number) >= schema.minimum) &&
        (schema.maximum === undefined || (value as number) <= schema.maximum)),
  );
}

/** An integer or null (`{type: ['integer', 'null']}`), typed as `number | null`. */
export const NullableInteger = (options: IntegerOptions = {}): TUnsafe<number | null> =>
  Type.Unsafe<number | null>({ [Kind]: 'NullableInteger', type: ['integer', 'null'], ...options });
