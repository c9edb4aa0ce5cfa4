import type { HrTime } from '@opentelemetry/api';

/**
 * Protobuf's wire format as the OTLP encoder writes it (otlp-protobuf.ts): a growing buffer, strings through
 * Buffer's native UTF-8 writer, ids through its hex decoder, messages closed over their length.
 */

// Protobuf's wire types.
const VARINT = 0;
export const I64 = 1;
export const LEN = 2;
const I32 = 5;

/** Strings shorter than this are written by a loop when all ASCII (ProtoWriter.ascii). */
export const SHORT = 64;

export const varintSize = (n: number) => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

/** A growing buffer that protobuf is written into; length-delimited messages reserve room for their length and close over it. */
export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(size = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(size);
  }

  room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  varint(value: number): void {
    this.room(10);
    const buf = this.buf;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        buf[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[this.pos++] = v;
      return;
    }
    // Beyond 32 bits, or negative (an int64 in two's complement: ten bytes).
    const abs = Math.abs(value);
    let low = abs >>> 0;
    let high = (abs / 0x100000000) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      buf[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[this.pos++] = low;
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  raw(bytes: Uint8Array): void {
    const n = bytes.length;
    this.room(n);
    if (n < 64) {
      // An attribute's key, mostly: a loop costs less than a typed array's set() this short.
      const buf = this.buf;
      let at = this.pos;
      for (let i = 0; i < n; i += 1) buf[at++] = bytes[i];
    } else this.buf.set(bytes, this.pos);
    this.pos += n;
  }

  /** A string field's length and UTF-8 bytes (its tag written before). */
  string(s: string): void {
    if (s.length < 43) {
      // At most 126 bytes of UTF-8: a one-byte length.
      this.room(1 + 3 * s.length);
      const n = s.length < SHORT ? this.ascii(s, this.pos + 1) : -1;
      if (n >= 0) {
        this.buf[this.pos] = n;
        this.pos += 1 + n;
        return;
      }
      const written = this.buf.write(s, this.pos + 1, 'utf8');
      this.buf[this.pos] = written;
      this.pos += 1 + written;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.varint(n);
    this.room(n);
    this.pos += this.buf.write(s, this.pos, n, 'utf8');
  }

  /**
   * Writes `s` at `at` when it is all ASCII (room made for it before) and answers its length, else -1
   * (what it wrote is then to be written over). For short strings, a loop costs less than a call to
   * Buffer's native writer.
   */
  ascii(s: string, at: number): number {
    const buf = this.buf;
    const n = s.length;
    for (let i = 0; i < n; i += 1) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) return -1;
      buf[at + i] = c;
    }
    return n;
  }

  /** A trace or span id (hex) as its bytes, length first. */
  id(hex: string): void {
    const n = hex.length >>> 1;
    this.room(1 + n);
    this.buf[this.pos] = n;
    this.buf.write(hex, this.pos + 1, n, 'hex');
    this.pos += 1 + n;
  }

  /** An id of two or four 32-bit words (a span's, a trace's) as its bytes, big-endian, length first. */
  idWords(w0: number, w1: number, w2?: number, w3?: number): void {
    const n = w2 === undefined ? 8 : 16;
    this.room(1 + n);
    this.buf[this.pos++] = n;
    this.word(w0);
    this.word(w1);
    if (w2 !== undefined) {
      this.word(w2);
      this.word(w3!);
    }
  }

  private word(w: number): void {
    const buf = this.buf;
    buf[this.pos] = w >>> 24;
    buf[this.pos + 1] = w >>> 16;
    buf[this.pos + 2] = w >>> 8;
    buf[this.pos + 3] = w;
    this.pos += 4;
  }

  /** Nanoseconds since the epoch as fixed64, without losing precision past 2^53. */
  time([seconds, nanos]: HrTime): void {
    this.timeParts(seconds, nanos);
  }

  /** Milliseconds since the epoch as `time` writes them once made an HrTime (whole seconds, nanoseconds rounded). */
  timeMs(ms: number): void {
    const seconds = Math.trunc(ms / 1000);
    this.timeParts(seconds, Math.round((ms - seconds * 1000) * 1e6));
  }

  private timeParts(seconds: number, nanos: number): void {
    this.room(8);
    const lowSeconds = seconds % 0x10000;
    const part = lowSeconds * 1e9 + Math.trunc(nanos);
    const upper = ((seconds - lowSeconds) / 0x10000) * 1e9;
    const upperLow = upper % 0x10000;
    const low = upperLow * 0x10000 + part;
    const low32 = low % 0x100000000;
    this.buf.writeUInt32LE(low32, this.pos);
    this.buf.writeUInt32LE(((upper - upperLow) / 0x10000 + (low - low32) / 0x100000000) >>> 0, this.pos + 4);
    this.pos += 8;
  }

  fixed32(value: number): void {
    this.room(4);
    this.buf.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  double(value: number): void {
    this.room(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  // A field: its tag, then its value.
  stringField(field: number, s: string): void {
    this.tag(field, LEN);
    this.string(s);
  }

  idField(field: number, hex: string): void {
    this.tag(field, LEN);
    this.id(hex);
  }

  varintField(field: number, value: number): void {
    this.tag(field, VARINT);
    this.varint(value);
  }

  timeField(field: number, time: HrTime): void {
    this.tag(field, I64);
    this.time(time);
  }

  fixed32Field(field: number, value: number): void {
    this.tag(field, I32);
    this.fixed32(value);
  }

  /** Opens a length-delimited message: `reserve` bytes kept for its length; its content starts at the position returned. */
  open(reserve: number): number {
    this.room(reserve);
    this.pos += reserve;
    return this.pos;
  }

  /** Closes the message opened at `start`: its length written before it, the content moved if the length needs more or fewer bytes. */
  close(start: number, reserve: number): void {
    const length = this.pos - start;
    const size = varintSize(length);
    if (size !== reserve) {
      this.room(size - reserve);
      this.buf.copyWithin(start + size - reserve, start, this.pos);
      this.pos += size - reserve;
    }
    let at = start - reserve;
    let v = length;
    while (v > 0x7f) {
      this.buf[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[at] = v;
  }

  /** The bytes written, copied (the buffer is written again by the next export while this one is still being sent). */
  take(): Uint8Array {
    const bytes = new Uint8Array(this.pos);
    bytes.set(this.buf.subarray(0, this.pos));
    this.pos = 0;
    return bytes;
  }
}
