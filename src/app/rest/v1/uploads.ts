import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Request } from 'express';
import busboy from 'busboy';
import { Upload } from 'graphql-upload-minimal';
import { BadRequestError, PayloadTooLargeError } from '../../../common/errors';
import { MAX_IMPORT_BYTES } from '../../../modules/import/csv-rows';

export interface RestUpload {
  /** The form's other fields, as a body. */
  fields: Record<string, unknown>;
  /** The file, as the GraphQL `Upload` scalar expects it; absent when the request carries none. */
  upload?: Upload;
  cleanup(): void;
}

function uploadOf(filename: string, mimetype: string, open: () => Readable): Upload {
  const upload = new Upload();
  (upload as unknown as { resolve(file: unknown): void }).resolve({ fieldName: 'file', filename, mimetype, encoding: 'utf-8', createReadStream: open });
  return upload;
}

/**
 * The file of a legacy upload: `file` as a text field (form-urlencoded, as interface.md documents, or
 * JSON), or a multipart file part, spooled to a temporary file so memory stays flat.
 */
export async function readRestUpload(req: Request, fileField: string): Promise<RestUpload> {
  if (!req.is('multipart/form-data')) {
    const fields = { ...((req.body as Record<string, unknown>) ?? {}) };
    const text = fields[fileField];
    delete fields[fileField];
    if (text !== undefined && typeof text !== 'string') throw new BadRequestError(`${fileField} must be the CSV text`);
    return {
      fields,
      upload: typeof text === 'string' ? uploadOf('upload.csv', 'text/csv', () => Readable.from([Buffer.from(text, 'utf8')])) : undefined,
      cleanup() {},
    };
  }

  const spool = path.join(os.tmpdir(), `gateway-upload-${randomUUID()}`);
  const cleanup = () => fs.rm(spool, { force: true }, () => undefined);
  return new Promise<RestUpload>((resolve, reject) => {
    const fields: Record<string, unknown> = {};
    let file: { filename: string; mimetype: string } | undefined;
    let tooLarge = false;
    // Parts named fileField (a file part or a text field): one is the import; two are a 400, not the first silently.
    let fileParts = 0;
    let writing: Promise<void> = Promise.resolve();
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: MAX_IMPORT_BYTES, files: 2, fields: 20, fieldSize: 64 * 1024 } });
    } catch (err) {
      // No boundary, or a Content-Type busboy does not take: a client's mistake.
      reject(new BadRequestError(`the multipart body cannot be read: ${(err as Error).message}`));
      return;
    }
    parser.on('field', (name, value) => {
      if (name === fileField) fileParts += 1;
      fields[name] = value;
    });
    parser.on('filesLimit', () => {
      fileParts += 2;
    });
    parser.on('file', (name, stream, info) => {
      // A body cut short errors the part's stream as well as the parser: the parser's 'error' answers it.
      stream.on('error', () => undefined);
      if (name !== fileField || ++fileParts > 1) {
        stream.resume();
        return;
      }
      file = { filename: info.filename ?? 'upload.csv', mimetype: info.mimeType };
      stream.on('limit', () => {
        tooLarge = true;
      });
      const out = fs.createWriteStream(spool);
      writing = new Promise((done, fail) => {
        out.on('finish', done);
        out.on('error', fail);
        // Destroyed below when the part breaks off: the parser's 'error' has answered, the spool is removed.
        out.on('close', done);
      });
      stream.on('error', () => out.destroy());
      stream.pipe(out);
    });
    parser.on('error', (err) => {
      cleanup();
      reject(new BadRequestError(`the multipart body cannot be read: ${(err as Error).message}`));
    });
    parser.on('close', () => {
      writing.then(
        () => {
          if (fileParts > 1) {
            cleanup();
            const message = 'give one file: the import reads one CSV file per request';
            reject(new BadRequestError(`${fileField}: ${message}`, [{ field: fileField, message }]));
            return;
          }
          if (tooLarge) {
            cleanup();
            reject(new PayloadTooLargeError(`the file is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MB; split it into several imports`));
            return;
          }
          resolve({
            fields,
            upload: file ? uploadOf(file.filename, file.mimetype, () => fs.createReadStream(spool)) : undefined,
            cleanup,
          });
        },
        (err) => {
          cleanup();
          reject(err);
        },
      );
    });
    req.pipe(parser);
  });
}
