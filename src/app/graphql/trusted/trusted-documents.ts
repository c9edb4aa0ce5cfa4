import type { DataSource } from 'typeorm';
import { DocumentNode, GraphQLSchema, parse, validate } from 'graphql';
import { clock } from '../../../common/clock';
import { NotTrustedError } from '../../../common/errors';
import { logger } from '../../../common/logger';
import { findDocument, RegisteredDocument } from '../../../modules/trusted-document/trusted-document.service';
import { queryHashOf } from '../http-request';
import { compileOperation } from '../execute';
import type { KnownOperation } from '../jit';
import type { DocumentTrust, Known } from '../known';
import { documentRules, MAX_TOKENS } from '../protections';
import { DOCUMENT_ID, operationOf } from './manifest';

/**
 * A document this process has found registered is asked for again after this long, in the background,
 * when it is next used: a document removed by `npm run documents -- remove` stops being served by a
 * running process within about this time, without a statement per request.
 */
const RECHECK_AFTER_MS = 60_000;

interface Entry {
  document: RegisteredDocument;
  /** When the table last said the document is there. */
  checkedAt: number;
  /** Its compiled query for the lean path, made on first use; null when it has none (see compiledQuery). */
  known?: Known | null;
}

/** What a request's document comes to under TRUSTED_DOCUMENTS. */
export type Verdict =
  /** Run what the request sends, as without registered documents (Apollo answers it). */
  | { run: 'as-sent' }
  /** The request named a registered document by its id alone: run this text. */
  | { run: 'registered'; body: string }
  | { refuse: NotTrustedError };

const AS_SENT: Verdict = { run: 'as-sent' };

export interface TrustedDocumentsOptions {
  /** GRAPHQL_MAX_ALIASES: a document is validated with the rules its text would meet on /graphql. */
  maxAliases?: number;
  /** A compiled query made ready for the lean path (CompiledOperations.prepare: its SQL plan). */
  prepare: (known: KnownOperation, hash: string) => Known;
}

/**
 * The registered documents of the database (trusted_documents, `npm run documents`), as one process
 * serves them: each loaded by its id on first use and kept (a registration made by another process is
 * found by the first request that sends its id: ids that no document has are never kept), its query
 * compiled once for the lean path.
 */
export class TrustedDocuments implements DocumentTrust {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry | undefined>>();

  constructor(
    readonly mode: 'allow' | 'require',
    private readonly ds: DataSource,
    private readonly schema: GraphQLSchema,
    private readonly options: TrustedDocumentsOptions,
  ) {}

  /** The registered document of this id: this process's copy, else the table's (one statement). */
  async find(id: string): Promise<RegisteredDocument | undefined> {
    if (!DOCUMENT_ID.test(id)) return undefined;
    return (this.cached(id) ?? (await this.load(id)))?.document;
  }

  isRegistered(id: string): boolean {
    return this.cached(id) !== undefined;
  }

  async compiledQuery(id: string, operationName: string | undefined): Promise<Known | null | undefined> {
    if (!DOCUMENT_ID.test(id)) return null;
    const entry = this.cached(id) ?? (await this.load(id));
    if (!entry) return null;
    if (entry.known === undefined) entry.known = this.compile(entry.document) ?? null;
    const { known } = entry;
    if (!known || (operationName !== undefined && operationName !== known.operation.name?.value)) return undefined;
    return known;
  }

  /**
   * What a request runs: `query`, its text when it sends one, and `hash`, the id in its
   * extensions.persistedQuery. In `require`, a text runs only when it is a registered document's, and an
   * id only when it is registered; in `allow`, everything runs as before, and an id alone that names a
   * registered document runs that document. `persisted`: the text of an automatic persisted query by its
   * hash, looked at first in `allow` (such a request runs as before). `unregistered`: an id the lean door
   * has already found no document for.
   */
  async judge(query: unknown, hash: string | undefined, lookups: { persisted?: (hash: string) => Promise<string | undefined>; unregistered?: string } = {}): Promise<Verdict> {
    if (typeof query === 'string' && query !== '') {
      if (this.mode === 'allow' || (await this.find(queryHashOf(query)))) return AS_SENT;
      return {
        refuse: new NotTrustedError(
          'this server runs only registered operations (TRUSTED_DOCUMENTS=require) and this document is not one: send the id of a registered operation in extensions.persistedQuery (npm run documents -- register adds a manifest\'s operations)',
        ),
      };
    }
    // No document at all, or not a string: Apollo refuses the request in its own words.
    if ((query !== undefined && query !== null) || hash === undefined) return AS_SENT;
    const lookedUp = hash === lookups.unregistered;
    // In allow, an automatic persisted query runs as before, without a look at the table.
    if (this.mode === 'allow' && (lookedUp || (await lookups.persisted?.(hash)) !== undefined)) return AS_SENT;
    const document = lookedUp ? undefined : await this.find(hash);
    if (document) return { run: 'registered', body: document.body };
    if (this.mode === 'allow') return AS_SENT;
    return { refuse: new NotTrustedError(`no registered operation has the id ${JSON.stringify(hash.slice(0, 80))} (TRUSTED_DOCUMENTS=require): register the client's manifest with npm run documents -- register`) };
  }

  /** The entry of this id in this process, if any; one used past its recheck time is asked for again in the background. */
  private cached(id: string): Entry | undefined {
    const entry = this.entries.get(id);
    const now = clock.now().getTime();
    if (entry && now - entry.checkedAt > RECHECK_AFTER_MS) {
      entry.checkedAt = now;
      void findDocument(this.ds, id).then(
        (found) => {
          if (!found) this.entries.delete(id);
        },
        (err: Error) => logger.warn('trusted document recheck failed', { id, error: err.message }),
      );
    }
    return entry;
  }

  /** Reads a document from the table, once for concurrent requests of the same id; an id with none is not kept. */
  private load(id: string): Promise<Entry | undefined> {
    let pending = this.loading.get(id);
    if (!pending) {
      pending = findDocument(this.ds, id)
        .then((document) => {
          if (!document) return undefined;
          const entry: Entry = { document, checkedAt: clock.now().getTime() };
          this.entries.set(id, entry);
          return entry;
        })
        .finally(() => this.loading.delete(id));
      this.loading.set(id, pending);
    }
    return pending;
  }

  /**
   * A registered query compiled for the lean path, validated again against this process's schema (which
   * may have changed since the registration); undefined for a mutation or subscription, or a document
   * that no longer validates (Apollo then answers it, with its errors).
   */
  private compile(registered: RegisteredDocument): Known | undefined {
    if (registered.type !== 'query') return undefined;
    let document: DocumentNode;
    try {
      document = parse(registered.body, { maxTokens: MAX_TOKENS });
    } catch {
      return undefined;
    }
    const operation = operationOf(document);
    if (!operation || validate(this.schema, document, documentRules(this.options.maxAliases)).length) return undefined;
    const compiled = compileOperation(this.schema, document, operation);
    return compiled && this.options.prepare({ document, operation, compiled }, registered.id);
  }
}
