import { Kind, Type, TypeRegistry, type SchemaOptions, type TUnsafe } from '@sinclair/typebox';

// Ajv reads the plain `{type: 'string', enum}` form; TypeBox's own Value.Check
// needs the custom kind registered to understand it.
if (!TypeRegistry.Has('StringEnum')) {
  TypeRegistry.Set<{ enum: string[] }>('StringEnum', (schema, value) => typeof value === 'string' && schema.enum.includes(value));
}

/** A string enum schema (`{type: 'string', enum}`) typed as the union of its values. */
export const StringEnum = <T extends string>(values: readonly T[], options: SchemaOptions = {}): TUnsafe<T> =>
  Type.Unsafe<T>({ [Kind]: 'StringEnum', type: 'string', enum: [...values], ...options });
