import { getNamedType, GraphQLField, isEnumType } from 'graphql';
import { planSql, ReadField } from '../../../common/read-model';
import { isoSql } from '../../../common/sql';
import { enumPart, Part, plain, Render, scopeOf, serialized, VALUE } from './parts';

/** The leaves of SQL plans: a read model's declared fields, as its service reads them. */

/** A read model's declared field of a GraphQL field: its own, or a decimal's exact twin `<name>Decimal`. */
export function declaredField(fields: Record<string, ReadField>, name: string): ReadField | undefined {
  const twin = name.endsWith('Decimal') ? name.slice(0, -'Decimal'.length) : undefined;
  if (Object.hasOwn(fields, name)) return fields[name];
  return twin && Object.hasOwn(fields, twin) && fields[twin].kind === 'decimal' ? fields[twin] : undefined;
}

/**
 * A leaf declared by a read model (common/read-model.ts), as its service reads it; undefined for a field
 * the service alone reads.
 */
export function readFieldPart(declared: ReadField | undefined, field: GraphQLField<unknown, unknown>, key: string): Part | undefined {
  if (!declared || declared.serviceOnly) return undefined;
  const sql: Render = (b, row) => planSql(declared, row, scopeOf(b, row));
  const type = getNamedType(field.type);
  switch (declared.kind) {
    case 'value':
      return plain(sql);
    case 'text':
      return plain((b, row) => `${sql(b, row)}::text`);
    case 'float':
      return plain((b, row) => `${sql(b, row)}::float8`);
    case 'ratio':
      return { shape: VALUE, render: sql, text: (b, row) => jsFloatSql(sql(b, row)!) };
    case 'timestamp':
      return plain((b, row) => isoSql(sql(b, row)!));
    case 'decimal':
      return serialized(field, key, sql);
    case 'enum':
      return isEnumType(type) ? enumPart(type, sql) : undefined;
  }
}

/**
 * A float8 of at most 1 in REST's text, a JSON number as JSON.stringify writes it. PostgreSQL writes the
 * same shortest digits, but with an exponent below 1e-4 (`9.998e-05`), where JavaScript writes one only
 * below 1e-6 (`9.998e-7`) and plain decimals above (`0.00009998`).
 */
export const jsFloatSql = (value: string) =>
  `(SELECT (CASE WHEN f.e IS NULL THEN f.t WHEN f.e <= 6 THEN '0.' || repeat('0', f.e - 1) || replace(f.m, '.', '') ELSE f.m || 'e-' || f.e END)::json` +
  ` FROM (SELECT g.t, split_part(g.t, 'e-', 1) AS m, NULLIF(split_part(g.t, 'e-', 2), '')::int AS e FROM (SELECT (${value})::text AS t) g) f)`;
