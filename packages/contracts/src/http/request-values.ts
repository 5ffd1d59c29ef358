import { Type, type IntegerOptions, type StringOptions } from '@sinclair/typebox';

// Request values the server can store and compute with. Each closes a gap
// between what a JSON Schema keyword admits and what Postgres or JavaScript
// accept, so the request is refused with 400 instead of failing with a 500.

// One character Postgres can store as text or jsonb: anything but NUL (neither
// type holds it) and lone UTF-16 surrogates (jsonb refuses their escapes, and
// UTF-8 cannot encode them). It matches the same strings with or without the
// regex `u` flag, so Ajv and TypeBox agree.
const STORABLE_CHAR = '(?:[^\\u0000\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])';

/** Pattern of storable text, at most `maxLength` characters (code points, as JSON Schema counts them). */
export const storableTextPattern = (maxLength?: number): string => `^${STORABLE_CHAR}${maxLength === undefined ? '*' : `{0,${maxLength}}`}$`;

/** A request string the server stores: refused with 400 rather than failing in Postgres. */
export const StorableText = (options: StringOptions = {}) => Type.String({ ...options, pattern: storableTextPattern() });

/**
 * An integer in a request (query, path or body). With type coercion on, Ajv
 * turns the strings "Infinity" and "1e999" into ±Infinity and then skips
 * minimum and maximum (ajv-validator/ajv#2212); the nested type check sees the
 * coerced number and refuses it.
 */
export const FiniteInteger = (options: IntegerOptions = {}) => Type.Integer({ ...options, allOf: [{ type: 'integer' }] });

/**
 * An RFC 3339 date-time that JavaScript's Date can read. The `date-time`
 * format also admits leap seconds (`23:59:60`) and hour-only offsets (`+05`),
 * which Date turns into an Invalid Date.
 */
export const DateTimeInput = (options: StringOptions = {}) => Type.String({ ...options, format: 'date-time', pattern: '^(?!.*:60)(?!.*[+-]\\d\\d$)' });
