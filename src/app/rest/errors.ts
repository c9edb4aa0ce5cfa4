import { Response } from 'express';
import { GraphQLSchema } from 'graphql';
import { httpStatusOf } from '../../common/errors';
import { retryAfterFor, toClientError } from '../graphql/format-error';
import { camelToSnake } from '../../common/names';


/** The REST error body of decisions.md: `{"error": {"code", "message", "details", "request_id"}}`, with its status. */
export function sendRestError(res: Response, schema: GraphQLSchema, error: unknown, requestError: boolean): void {
  const { requestId, scope } = res.req;
  const client = toClientError(schema, error, requestError, requestId);
  const details = client.details.map((d) => {
    const detail = d as { field?: string };
    return detail.field ? { ...detail, field: camelToSnake(detail.field) } : detail;
  });
  // A validation message that just lists its fields is rebuilt with the REST (snake_case) names.
  const describe = (list: unknown[]) => list.map((d) => `${(d as { field: string }).field}: ${(d as { message: string }).message}`).join('; ');
  const fieldMessage =
    client.code === 'VALIDATION_FAILED' && details.length && client.message === describe(client.details)
      ? describe(details)
      : restFieldNames(client.message);
  if (scope) res.setHeader('x-sql-statements', String(scope.sqlStatements));
  res.set(retryAfterFor(client.code));
  res.status(httpStatusOf[client.code] ?? 500).json({
    error: { code: client.code, message: fieldMessage, details, request_id: requestId },
  });
}

/**
 * GraphQL's coercion messages speak of variables and camelCase input fields; a REST client sent query
 * parameters and a snake_case body, so the message names those: `total_supply: Int cannot represent ...`.
 */
export function restFieldNames(message: string): string {
  const inBody = /^Variable "\$input" got invalid value (.*?) at "input\.([^"]+)"; ([\s\S]*)$/.exec(message);
  if (inBody) return `${camelToSnake(inBody[2])}: ${inBody[3]}`;
  const wholeBody = /^Variable "\$input" got invalid value [\s\S]*?; ([\s\S]*)$/.exec(message);
  if (wholeBody) return `body: ${wholeBody[1].replace(/Field "(\w+)"/g, (_, f: string) => `Field "${camelToSnake(f)}"`)}`;
  const parameter = /^Variable "\$(\w+)" got invalid value ([\s\S]*?); ([\s\S]*)$/.exec(message);
  if (parameter) return `${parameter[1]}: ${parameter[3]} (got ${parameter[2]})`;
  return message;
}
