import { getNamedType, GraphQLField, isEnumType } from 'graphql';
import { ReadField } from '../../../common/read-model';
import { planSql } from '../../../common/read-model-sql';
import { isoSql, jsFloatSql } from '../../../common/sql';
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
