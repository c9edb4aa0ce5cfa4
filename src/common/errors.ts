import { GraphQLError } from 'graphql';

/** One field's problem, as listed in `error.details`. */
export interface FieldProblem {
  field: string;
  message: string;
  line?: number;
}

/** The error codes of decisions.md, with the HTTP status each one takes on the REST door. */
export const httpStatusOf: Record<string, number> = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PERSISTED_QUERY_NOT_TRUSTED: 400,
  VALIDATION_FAILED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  TIMEOUT: 503,
};

/** Seconds a client is told to wait (Retry-After) before retrying an UNAVAILABLE or TIMEOUT answer. */
export const RETRY_AFTER_SECONDS = 1;

export abstract class AppError extends GraphQLError {
  constructor(code: keyof typeof httpStatusOf, message: string, details: FieldProblem[] = []) {
    super(message, { extensions: { code, details } });
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, details: FieldProblem[] = []) {
    super('BAD_REQUEST', message, details);
  }
}
export class UnauthenticatedError extends AppError {
  constructor(message = 'this operation needs an API key in the access-token header (or Authorization: Bearer)') {
    super('UNAUTHENTICATED', message);
  }
}
export class ForbiddenError extends AppError {
  constructor(message: string) {
    super('FORBIDDEN', message);
  }
}
export class NotFoundError extends AppError {
  constructor(message: string) {
    super('NOT_FOUND', message);
  }
}
export class MethodNotAllowedError extends AppError {
  /** `allowed`: the methods the path takes, for the Allow header. */
  constructor(readonly allowed: string[], message: string) {
    super('METHOD_NOT_ALLOWED', message);
  }
}
export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super('UNSUPPORTED_MEDIA_TYPE', message);
  }
}
/**
 * TRUSTED_DOCUMENTS=require: the request's document (its text, or the id it sends) is not a registered one
 * (docs/trusted-documents.md). Its own code, so that a client tells it from a mistake in a document.
 */
export class NotTrustedError extends AppError {
  constructor(message: string) {
    super('PERSISTED_QUERY_NOT_TRUSTED', message);
  }
}
export class RequestTimeoutError extends AppError {
  constructor(message: string) {
    super('REQUEST_TIMEOUT', message);
  }
}
export class ConflictError extends AppError {
  constructor(message: string, details: FieldProblem[] = []) {
    super('CONFLICT', message, details);
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(message: string) {
    super('PAYLOAD_TOO_LARGE', message);
  }
}
export class RateLimitedError extends AppError {
  /** `retryAfterS`: when the client may try again (Retry-After on REST, extensions.retryAfter on GraphQL). */
  constructor(message: string, retryAfterS?: number) {
    super('RATE_LIMITED', message);
    if (retryAfterS !== undefined) this.extensions.retryAfter = retryAfterS;
  }
}
export class ValidationError extends AppError {
  constructor(details: FieldProblem[], message?: string) {
    super('VALIDATION_FAILED', message ?? details.map((d) => `${d.field}: ${d.message}`).join('; '), details);
  }
}

/**
 * The database cannot be reached now (its connection was lost, refused, or none came free in time): the
 * request did nothing that the client must know of, and may be sent again after Retry-After.
 */
export class UnavailableError extends AppError {
  constructor(message = 'the database is unavailable for a moment; retry shortly') {
    super('UNAVAILABLE', message);
  }
}

/**
 * The database cancelled a statement of the request (its statement_timeout ran out, or an operator
 * cancelled it): nothing was written, the database is busy or the plan was slow, and the request may be
 * sent again after Retry-After. Not a lost connection: the connection goes on serving.
 */
export class StatementTimeoutError extends AppError {
  constructor(message = 'the database took too long on this request and cancelled it; retry shortly') {
    super('TIMEOUT', message);
  }
}

/** Collects field problems so that one response names every bad field, not only the first. */
export class Problems {
  readonly list: FieldProblem[] = [];
  add(field: string, message: string): void {
    this.list.push({ field, message });
  }
  throwIfAny(): void {
    if (this.list.length) throw new ValidationError(this.list);
  }
  /** As a 400: for values of the wrong form or outside a closed list (decisions.md, "Errors"), not for broken rules. */
  throwIfAnyMalformed(): void {
    if (this.list.length) throw new BadRequestError(this.list.map((d) => `${d.field}: ${d.message}`).join('; '), this.list);
  }
}

/** One item's problem in a request that names many items (a bulk create): which item, and its error's code. */
export interface ItemProblem extends FieldProblem {
  index: number;
  code: string;
}

/**
 * The status of a refused bulk request, by the most basic class among its items' errors: a request to fix
 * (422) before what it names (404), before who may act on it (403), before the state it meets (409).
 */
const ITEM_CODES_FIRST = ['BAD_REQUEST', 'VALIDATION_FAILED', 'NOT_FOUND', 'FORBIDDEN', 'CONFLICT'];
const ITEMS_IN_MESSAGE = 10;

/**
 * A bulk request refused whole: every failing item listed (`details`: index, code, field, message), nothing
 * written. The error's own code is the first of ITEM_CODES_FIRST that some item has.
 */
export class ItemsError extends AppError {
  constructor(items: ItemProblem[], total: number, noun: string) {
    const codes = new Set(items.map((i) => i.code));
    const code = ITEM_CODES_FIRST.find((c) => codes.has(c)) ?? items[0].code;
    const indexes = [...new Set(items.map((i) => i.index))];
    // The message stays readable for 100 refused items; `details` has them all.
    const listed = items.slice(0, ITEMS_IN_MESSAGE).map((i) => `[${i.index}]${i.field ? ` ${i.field}` : ''}: ${i.message}`);
    if (items.length > ITEMS_IN_MESSAGE) listed.push(`and ${items.length - ITEMS_IN_MESSAGE} more problems (see details)`);
    super(code, `${indexes.length} of ${total} ${noun} refused, so none was written: ${listed.join('; ')}`, items);
  }
}

/** The problems of item `index` as ItemProblems: each field of a validation error, else the error itself on `field`. */
export function itemProblems(index: number, error: AppError, field: string): ItemProblem[] {
  const code = String(error.extensions.code);
  const details = (error.extensions.details as FieldProblem[] | undefined) ?? [];
  if (details.length && code === 'VALIDATION_FAILED') return details.map((d) => ({ index, code, field: d.field, message: d.message }));
  return [{ index, code, field: details[0]?.field ?? field, message: error.message }];
}

/** PostgreSQL's unique_violation, so services can turn a lost race into a 409. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e?.code === '23505' || e?.driverError?.code === '23505';
}
