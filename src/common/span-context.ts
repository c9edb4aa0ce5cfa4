import type { SpanContext, TraceState } from '@opentelemetry/api';

/**
 * The ids of the gateway's own spans (common/span.ts) as 32-bit words: made from Math.random without a
 * string, written into an export's bytes by the protobuf encoder without a hex decoding
 * (otlp-protobuf.ts), and spelled in hex only when something asks for the string (a log line's trace
 * id, a traceparent, the JSON encoding), once.
 */

// Two hex digits of each byte: an id is joined from them (a third of the time of a Buffer's writes and hex slice).
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
export const random32 = () => (Math.random() * 2 ** 32) >>> 0;
const hex32 = (n: number) => HEX[n >>> 24] + HEX[(n >>> 16) & 0xff] + HEX[(n >>> 8) & 0xff] + HEX[n & 0xff];
const wordAt = (hex: string, at: number) => Number.parseInt(hex.slice(at, at + 8), 16) >>> 0;

/** A trace id: 16 bytes as four words, shared by the spans of the trace; its hex made once. */
export class TraceWords {
  private hex: string | undefined;

  constructor(
    readonly w0: number,
    readonly w1: number,
    readonly w2: number,
    readonly w3: number,
  ) {}

  /** A random trace id, never all zero (W3C), as the SDK's RandomIdGenerator makes them. */
  static random(): TraceWords {
    return new TraceWords(random32(), random32(), random32(), random32() || 1);
  }

  /** The words of a valid trace id in hex (an incoming traceparent's), which keeps that spelling. */
  static of(hex: string): TraceWords {
    const words = new TraceWords(wordAt(hex, 0), wordAt(hex, 8), wordAt(hex, 16), wordAt(hex, 24));
    words.hex = hex;
    return words;
  }

  get id(): string {
    this.hex ??= hex32(this.w0) + hex32(this.w1) + hex32(this.w2) + hex32(this.w3);
    return this.hex;
  }
}

/** A span's own context: its trace's words and its span id as two words (never both zero); the hex made when asked for. */
export class WordsContext implements SpanContext {
  private spanHex: string | undefined;

  constructor(
    readonly trace: TraceWords,
    readonly high: number,
    readonly low: number,
    readonly traceFlags: number,
    readonly traceState?: TraceState,
  ) {}

  /** A new span id in `trace`. */
  static random(trace: TraceWords, traceFlags: number, traceState?: TraceState): WordsContext {
    return new WordsContext(trace, random32(), random32() || 1, traceFlags, traceState);
  }

  get traceId(): string {
    return this.trace.id;
  }

  get spanId(): string {
    this.spanHex ??= hex32(this.high) + hex32(this.low);
    return this.spanHex;
  }
}
