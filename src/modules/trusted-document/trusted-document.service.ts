import type { DataSource, EntityManager } from 'typeorm';

/** The kinds of operation a persisted-query manifest lists. */
export const DOCUMENT_TYPES = ['query', 'mutation', 'subscription'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** One operation of a manifest, as registered: its id is the SHA-256 (hex) of its body. */
export interface TrustedDocument {
  id: string;
  name: string;
  type: DocumentType;
  body: string;
}

export interface RegisteredDocument extends TrustedDocument {
  registeredAt: Date;
}

type Db = DataSource | EntityManager;

interface Row {
  id: string;
  name: string;
  type: DocumentType;
  body: string;
  registered_at: Date;
}

const fromRow = (row: Row): RegisteredDocument => ({ id: row.id, name: row.name, type: row.type, body: row.body, registeredAt: new Date(row.registered_at) });

/**
 * Stores the documents in one statement (all or none); an id registered already is left as it is (its
 * body is the same: the id is its hash). Returns the ids that were new.
 */
export async function registerDocuments(db: Db, documents: readonly TrustedDocument[]): Promise<string[]> {
  if (!documents.length) return [];
  const rows: { id: string }[] = await db.query(
    `INSERT INTO "trusted_documents" ("id", "name", "type", "body")
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
     ON CONFLICT ("id") DO NOTHING RETURNING "id"`,
    [documents.map((d) => d.id), documents.map((d) => d.name), documents.map((d) => d.type), documents.map((d) => d.body)],
  );
  return rows.map((r) => r.id);
}

export async function findDocument(db: Db, id: string): Promise<RegisteredDocument | undefined> {
  const rows: Row[] = await db.query(`SELECT "id", "name", "type", "body", "registered_at" FROM "trusted_documents" WHERE "id" = $1`, [id]);
  return rows.length ? fromRow(rows[0]) : undefined;
}

/** Every registered document, oldest registration first. */
export async function listDocuments(db: Db): Promise<RegisteredDocument[]> {
  const rows: Row[] = await db.query(`SELECT "id", "name", "type", "body", "registered_at" FROM "trusted_documents" ORDER BY "registered_at", "name", "id"`);
  return rows.map(fromRow);
}

/** Removes a document; undefined when no document has this id. */
export async function removeDocument(db: Db, id: string): Promise<RegisteredDocument | undefined> {
  const [rows]: [Row[], number] = await db.query(`DELETE FROM "trusted_documents" WHERE "id" = $1 RETURNING "id", "name", "type", "body", "registered_at"`, [id]);
  return rows.length ? fromRow(rows[0]) : undefined;
}
