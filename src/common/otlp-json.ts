import type { HrTime } from '@opentelemetry/api';
import { flagsOf, settledResources } from './otlp';
import type { ExportedSpan, Resource, Scope, SpanBatch } from './otlp';

/** OTLP's ExportTraceServiceRequest in OTLP's JSON (`http/json`), the bytes of the SDK's JsonTraceSerializer (see otlp.ts). */

// OTLP's JSON: ids in hex, times as decimal strings of nanoseconds, enums as numbers; objects in the SDK's
// order of keys, stringified once (JSON.stringify writes the long strings natively).
function jsonTime([seconds, nanos]: HrTime): string {
  const s = Math.trunc(seconds);
  const n = Math.trunc(nanos);
  return s === 0 ? String(n) : `${s}${String(n).padStart(9, '0')}`;
}

function jsonValue(value: unknown): object {
  switch (typeof value) {
    case 'string':
      return { stringValue: value };
    case 'boolean':
      return { boolValue: value };
    case 'number':
      return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
    default:
  }
  if (value instanceof Uint8Array) return { bytesValue: Buffer.from(value.buffer, value.byteOffset, value.length).toString('base64') };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(jsonValue) } };
  if (typeof value === 'object' && value !== null) return { kvlistValue: { values: jsonAttributes(value as Record<string, unknown>) } };
  return {};
}

function jsonAttributes(attributes: Record<string, unknown>): object[] {
  const keys = Object.keys(attributes);
  const out = new Array<object>(keys.length);
  for (let i = 0; i < keys.length; i += 1) out[i] = { key: keys[i], value: jsonValue(attributes[keys[i]]) };
  return out;
}

function jsonSpan(span: ExportedSpan): object {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: parent?.spanId ? parent.spanId : undefined,
    traceState: context.traceState?.serialize(),
    name: span.name,
    kind: span.kind == null ? 0 : span.kind + 1,
    startTimeUnixNano: jsonTime(span.startTime),
    endTimeUnixNano: jsonTime(span.endTime),
    attributes: jsonAttributes(span.attributes),
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events.map((e) => ({ attributes: e.attributes ? jsonAttributes(e.attributes) : [], name: e.name, timeUnixNano: jsonTime(e.time), droppedAttributesCount: e.droppedAttributesCount || 0 })),
    droppedEventsCount: span.droppedEventsCount,
    status: { code: span.status.code, message: span.status.message },
    links: span.links.map((l) => ({
      attributes: l.attributes ? jsonAttributes(l.attributes) : [],
      spanId: l.context.spanId,
      traceId: l.context.traceId,
      traceState: l.context.traceState?.serialize(),
      droppedAttributesCount: l.droppedAttributesCount || 0,
      flags: flagsOf(l.context.traceFlags, l.context.isRemote),
    })),
    droppedLinksCount: span.droppedLinksCount,
    flags: flagsOf(context.traceFlags, parent?.isRemote),
  };
}

const jsonResources = new WeakMap<Resource, object>();
const jsonScopes = new WeakMap<Scope, object>();
const scopeKeys = new WeakMap<Scope, string>();

function jsonResource(resource: Resource): object {
  let out = jsonResources.get(resource);
  if (!out) {
    out = { attributes: jsonAttributes(resource.attributes), droppedAttributesCount: 0, ...(resource.schemaUrl ? { schemaUrl: resource.schemaUrl } : {}) };
    if (!resource.asyncAttributesPending) jsonResources.set(resource, out);
  }
  return out;
}

function jsonScope(scope: Scope): object {
  let out = jsonScopes.get(scope);
  if (!out) {
    const attributes = scope.attributes && Object.keys(scope.attributes).length > 0 ? { attributes: jsonAttributes(scope.attributes), droppedAttributesCount: scope.droppedAttributesCount ?? 0 } : {};
    out = { name: scope.name, version: scope.version, ...attributes };
    jsonScopes.set(scope, out);
  }
  return out;
}

/** Scopes by name, version and schema, as the SDK's JSON serializer groups them. */
function scopeKey(scope: Scope): string {
  let key = scopeKeys.get(scope);
  if (key === undefined) scopeKeys.set(scope, (key = `${scope.name}@${scope.version || ''}:${scope.schemaUrl || ''}`));
  return key;
}

/** One resource's and scope's spans of a JSON batch: each span's JSON text. */
interface JsonGroup {
  resource: Resource;
  key: string;
  scope: Scope;
  spans: string[];
}

/** The JSON batch (`http/json`): each span stringified as it is added, the request's text joined around them. */
export class JsonBatch implements SpanBatch {
  count = 0;
  private groups: JsonGroup[] = [];
  private last: JsonGroup | undefined;

  add(span: ExportedSpan): void {
    const text = JSON.stringify(jsonSpan(span));
    const key = scopeKey(span.instrumentationScope);
    let group = this.last;
    if (!group || group.resource !== span.resource || group.key !== key) {
      group = this.groups.find((g) => g.resource === span.resource && g.key === key);
      if (!group) this.groups.push((group = { resource: span.resource, key, scope: span.instrumentationScope, spans: [] }));
      this.last = group;
    }
    group.spans.push(text);
    this.count += 1;
  }

  settled(): Promise<unknown> | undefined {
    return settledResources(this.groups.map((g) => g.resource));
  }

  seal(): Uint8Array {
    // The keys in the order the SDK's serializer writes them; an undefined schemaUrl left out as JSON.stringify leaves it.
    const resources: string[] = [];
    const done = new Set<Resource>();
    for (const first of this.groups) {
      const resource = first.resource;
      if (done.has(resource)) continue;
      done.add(resource);
      const scopeSpans = this.groups
        .filter((g) => g.resource === resource)
        .map((g) => `{"scope":${JSON.stringify(jsonScope(g.scope))},"spans":[${g.spans.join(',')}]${g.scope.schemaUrl === undefined ? '' : `,"schemaUrl":${JSON.stringify(g.scope.schemaUrl)}`}}`);
      resources.push(`{"resource":${JSON.stringify(jsonResource(resource))},"scopeSpans":[${scopeSpans.join(',')}]${resource.schemaUrl ? `,"schemaUrl":${JSON.stringify(resource.schemaUrl)}` : ''}}`);
    }
    this.groups = [];
    this.last = undefined;
    this.count = 0;
    return Buffer.from(`{"resourceSpans":[${resources.join(',')}]}`, 'utf8');
  }
}

/** The spans as an OTLP ExportTraceServiceRequest in OTLP's JSON (UTF-8). */
export function encodeJson(spans: readonly ExportedSpan[]): Uint8Array {
  const batch = new JsonBatch();
  for (const span of spans) batch.add(span);
  return batch.seal();
}
