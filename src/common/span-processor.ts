import { diag, TraceFlags } from '@opentelemetry/api';
import type { ExportedSpan, SpanBatch } from './otlp';

/**
 * The gateway's span processor for OTLP over HTTP: each sampled span is encoded into the next export
 * request as it ends (common/otlp.ts's SpanBatch), so no span object outlives its request and an export
 * builds no object per span; what waits for the exporter is bytes. Batching as the SDK's
 * BatchSpanProcessor does it, from the same settings (OTEL_BSP_*): a request every `maxExportBatchSize`
 * spans or `scheduledDelayMillis` after the first waiting one, one export at a time, spans dropped past
 * `maxQueueSize` waiting, an export given up after `exportTimeoutMillis`.
 */
export interface BatchSettings {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
}

/** Sends one request's bytes (`spans`: how many spans it holds); rejects when the export failed. */
export type SendRequest = (body: Uint8Array, spans: number) => Promise<void>;

/** The settings from OTEL_BSP_* as the SDK reads them (its defaults otherwise). */
export function batchSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): BatchSettings {
  const setting = (name: string, otherwise: number) => {
    const value = env[name]?.trim() ? Number(env[name]) : Number.NaN;
    return Number.isFinite(value) && value >= 0 ? value : otherwise;
  };
  const maxQueueSize = setting('OTEL_BSP_MAX_QUEUE_SIZE', 2048);
  const maxExportBatchSize = setting('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512);
  if (maxExportBatchSize > maxQueueSize) diag.warn('BatchSpanProcessor: maxExportBatchSize must be smaller or equal to maxQueueSize, setting maxExportBatchSize to match maxQueueSize');
  return {
    maxQueueSize,
    maxExportBatchSize: Math.max(1, Math.min(maxExportBatchSize, maxQueueSize)),
    scheduledDelayMillis: setting('OTEL_BSP_SCHEDULE_DELAY', 5000),
    exportTimeoutMillis: setting('OTEL_BSP_EXPORT_TIMEOUT', 30000),
  };
}

export class EncodingSpanProcessor {
  private current: SpanBatch;
  // Full batches waiting while an export is out.
  private readonly full: SpanBatch[] = [];
  private readonly spare: SpanBatch[] = [];
  // Spans encoded and not yet handed to an export (the SDK's queue).
  private queued = 0;
  private dropped = 0;
  private exporting: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly newBatch: () => SpanBatch,
    private readonly send: SendRequest,
    private readonly settings: BatchSettings,
    private readonly onShutdown: () => Promise<void> = async () => {},
  ) {
    this.current = newBatch();
  }

  onStart(): void {}

  onEnd(span: ExportedSpan): void {
    if (this.stopping || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.queued >= this.settings.maxQueueSize) {
      if (this.dropped === 0) diag.debug('maxQueueSize reached, dropping spans');
      this.dropped += 1;
      return;
    }
    if (this.dropped > 0) {
      diag.warn(`Dropped ${this.dropped} spans because maxQueueSize reached`);
      this.dropped = 0;
    }
    try {
      this.current.add(span);
    } catch (err) {
      // The batch is as it was before this span (SpanBatch.add writes a span whole or not at all).
      diag.error('a span could not be encoded', err);
      return;
    }
    this.queued += 1;
    if (this.current.count >= this.settings.maxExportBatchSize) {
      this.full.push(this.current);
      this.current = this.spare.pop() ?? this.newBatch();
    }
    if (!this.exporting) this.next();
  }

  /** Starts the next export when a batch is full, else the timer for the one being filled. */
  private next(): void {
    if (this.full.length > 0) this.exportBatch(this.full.shift()!);
    else if (this.timer === undefined && this.current.count > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (!this.exporting && this.current.count > 0) this.exportCurrent();
      }, this.settings.scheduledDelayMillis);
      this.timer.unref();
    }
  }

  private exportCurrent(): void {
    const batch = this.current;
    this.current = this.spare.pop() ?? this.newBatch();
    this.exportBatch(batch);
  }

  private exportBatch(batch: SpanBatch): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.queued -= batch.count;
    this.exporting = this.sent(batch).then((done) => {
      this.exporting = undefined;
      // A request given up on may still be sent by the exporter (its retries): its batch's bytes are not written again.
      if (done && this.spare.length < 2) this.spare.push(batch);
      this.next();
    });
  }

  /** Sends `batch` (at once when its resources are final: an export starts within the span's end that filled it). */
  private sent(batch: SpanBatch): Promise<boolean> {
    const settled = batch.settled();
    if (!settled) return this.sentNow(batch);
    // A detector that failed leaves the attributes it has: the spans go with those.
    const now = () => this.sentNow(batch);
    return settled.then(now, now);
  }

  /** Whether the exporter is done with the request (sent, or failed), rather than given up on after the export timeout. */
  private async sentNow(batch: SpanBatch): Promise<boolean> {
    const spans = batch.count;
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    try {
      const body = batch.seal();
      await Promise.race([
        this.send(body, spans),
        // Not waited for longer: the next batch can start.
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            timedOut = true;
            reject(new Error('Timeout'));
          }, this.settings.exportTimeoutMillis);
        }),
      ]);
    } catch (err) {
      diag.error('span export failed', err);
    } finally {
      clearTimeout(timer);
    }
    return !timedOut;
  }

  /** Exports every span ended so far. */
  async forceFlush(): Promise<void> {
    if (this.current.count > 0) {
      this.full.push(this.current);
      this.current = this.spare.pop() ?? this.newBatch();
    }
    while (this.exporting || this.full.length > 0) {
      if (!this.exporting) this.next();
      await this.exporting;
    }
  }

  shutdown(): Promise<void> {
    this.stopping ??= this.forceFlush().then(() => this.onShutdown());
    return this.stopping;
  }
}
