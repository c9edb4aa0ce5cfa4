import { Readable, Transform, TransformCallback } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { BadRequestError, PayloadTooLargeError } from '../../common/errors';

export const MAX_IMPORT_BYTES = 20 * 1024 * 1024;
export const MAX_IMPORT_ROWS = 100_000;

export const CSV_COLUMNS = ['name', 'description', 'image_url', 'animation_url', 'external_link', 'metadata', 'owner', 'token_id', 'token_uri'] as const;
export type CsvColumn = (typeof CSV_COLUMNS)[number];
const REQUIRED_COLUMNS: CsvColumn[] = ['name', 'description', 'image_url', 'owner'];
/** With a token_uri column the documents may fill name, description and image: only owner is required. */
const REQUIRED_WITH_TOKEN_URI: CsvColumn[] = ['owner'];

export interface CsvRow {
  /** Line of the file where the row starts (the header is line 1). */
  line: number;
  values: Partial<Record<CsvColumn, string>>;
  /** Set when the row has another number of fields than the header. */
  fieldCountProblem?: string;
}

/** Passes bytes on as UTF-8 text, refusing what is not UTF-8 and counting bytes against the size limit. */
class Utf8Limit extends Transform {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private bytes = 0;

  constructor(private readonly maxBytes: number) {
    super({ decodeStrings: true, readableObjectMode: false });
  }

  _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      done(new PayloadTooLargeError(`the file is larger than ${this.maxBytes / 1024 / 1024} MB; split it into several imports`));
      return;
    }
    try {
      done(null, this.decoder.decode(chunk, { stream: true }));
    } catch {
      done(new BadRequestError('the file is not UTF-8 text', [{ field: 'file', message: 'not UTF-8' }]));
    }
  }

  _flush(done: TransformCallback): void {
    try {
      done(null, this.decoder.decode());
    } catch {
      done(new BadRequestError('the file is not UTF-8 text', [{ field: 'file', message: 'not UTF-8' }]));
    }
  }
}

function countLineBreaks(text: string): number {
  return text.match(/\r\n|\n|\r/g)?.length ?? 0;
}

function checkHeader(header: string[]): CsvColumn[] {
  const columns = header.map((h) => h.trim().toLowerCase());
  const unknown = columns.filter((c) => !(CSV_COLUMNS as readonly string[]).includes(c));
  const missing = (columns.includes('token_uri') ? REQUIRED_WITH_TOKEN_URI : REQUIRED_COLUMNS).filter((c) => !columns.includes(c));
  const repeated = columns.filter((c, i) => columns.indexOf(c) !== i);
  const problems = [
    ...unknown.map((c) => ({ field: c, message: `unknown column; the columns are ${CSV_COLUMNS.join(', ')}` })),
    ...missing.map((c) => ({ field: c, message: 'required column missing' })),
    ...repeated.map((c) => ({ field: c, message: 'column given twice' })),
  ];
  if (problems.length) {
    throw new BadRequestError(`the header row is not usable: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, problems);
  }
  return columns as CsvColumn[];
}

/**
 * The rows of a CSV file, streamed: header row first (its columns checked), quoted fields, embedded
 * newlines, CRLF and a UTF-8 BOM handled by csv-parse. Memory stays flat whatever the file's size.
 */
export async function* readCsvRows(
  source: Readable,
  limits: { maxBytes: number; maxRows: number } = { maxBytes: MAX_IMPORT_BYTES, maxRows: MAX_IMPORT_ROWS },
): AsyncGenerator<CsvRow> {
  const text = new Utf8Limit(limits.maxBytes);
  const parser = parse({ bom: true, raw: true, relax_column_count: true, skip_empty_lines: true, max_record_size: 1024 * 1024 });
  source.on('error', (err) => text.destroy(err));
  text.on('error', (err) => parser.destroy(err));
  source.pipe(text).pipe(parser);

  let columns: CsvColumn[] | undefined;
  let rows = 0;
  // Lines are counted from each record's raw text: a record may span lines, and blank lines are skipped.
  let lineBreaks = 0;
  try {
    for await (const { record, raw } of parser as AsyncIterable<{ record: string[]; raw: string }>) {
      const leading = /^(?:\r\n|\n|\r)*/.exec(raw)![0];
      const startLine = lineBreaks + 1 + countLineBreaks(leading);
      lineBreaks += countLineBreaks(raw);
      if (!columns) {
        columns = checkHeader(record);
        continue;
      }
      rows += 1;
      if (rows > limits.maxRows) {
        throw new PayloadTooLargeError(`the file has more than ${limits.maxRows} rows; split it into several imports`);
      }
      const values: CsvRow['values'] = {};
      columns.forEach((column, i) => {
        const cell = record[i];
        if (cell !== undefined && cell !== '') values[column] = cell;
      });
      const row: CsvRow = { line: startLine, values };
      if (record.length !== columns.length) row.fieldCountProblem = `has ${record.length} fields; the header has ${columns.length}`;
      yield row;
    }
  } catch (err) {
    if (err instanceof BadRequestError || err instanceof PayloadTooLargeError) throw err;
    // Every parser error is the file's fault, whatever its code (INVALID_OPENING_QUOTE has no CSV_ prefix).
    if (err instanceof CsvError) {
      const line = typeof err.lines === 'number' ? err.lines : undefined;
      // The parser's message quotes the field read so far, which may be long.
      throw new BadRequestError(`the file is not valid CSV at line ${line ?? '?'}: ${err.message.slice(0, 300)}`, [
        { field: 'file', message: err.code, ...(line ? { line } : {}) },
      ]);
    }
    throw err;
  } finally {
    source.unpipe();
    parser.destroy();
  }
  if (!columns) throw new BadRequestError('the file is empty: it needs a header row', [{ field: 'file', message: 'empty' }]);
}
