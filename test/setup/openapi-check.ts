import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

export type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * Checks REST responses against the server's own OpenAPI document (GET /v1/openapi.json): a body that
 * drifts from its route's documented schema, or a status the route does not document, fails the test.
 */
export class ResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, formats: { binary: true } });
  private readonly templates: { template: string; pattern: RegExp }[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Doc) {
    addFormats(this.ajv);
    this.ajv.addSchema(doc as object, 'openapi');
    this.templates = Object.keys(doc.paths)
      .map((template) => ({ template, pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`) }))
      // Literal paths before templated ones: /v1/assets/import before /v1/assets/{token_address}/{token_id}.
      .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  }

  /** Throws naming the route, status and every mismatch; routes outside the document are not checked. */
  check(method: string, url: string, status: number, body: unknown, contentType: string | null): void {
    const path = url.split('?')[0];
    const verb = method.toLowerCase();
    const match = this.templates.find(({ template, pattern }) => pattern.test(path) && this.doc.paths[template][verb]);
    if (!match) return;
    const responses = this.doc.paths[match.template][verb].responses;
    if (!(String(status) in responses)) {
      throw new Error(`${method} ${match.template} answered ${status}, a status its OpenAPI description does not list`);
    }
    if (!contentType?.includes('application/json')) throw new Error(`${method} ${match.template} answered ${status} with ${contentType}, not JSON`);
    const key = `${verb} ${match.template} ${status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      const ref = `openapi#/${pointer('paths', match.template, verb, 'responses', String(status), 'content', 'application/json', 'schema')}`;
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(key, validate);
    }
    if (!validate(body)) {
      const problems = this.ajv.errorsText(validate.errors, { separator: '\n  ' });
      throw new Error(`${method} ${path} ${status}: the body does not match its OpenAPI schema:\n  ${problems}`);
    }
  }
}
