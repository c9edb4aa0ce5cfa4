import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { propagation, ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { ParentBasedSampler, ReadableSpan, SamplingDecision, TraceIdRatioBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import { requestSpanOf, traceOperation, traceRequest, traceStatement, tracingStarted } from '../src/common/tracing';

/**
 * A request's span is the gateway's own (src/common/span.ts's LightSpan, not the SDK's), sampled by the
 * sampler the SDK was configured with (OTEL_TRACES_SAMPLER): the same decision per trace id as the SDK's
 * tracer would take, its children in its trace, all handed to the SDK's span processor with the
 * provider's resource and scope. In-process, without a server (tracing.test.ts exports through one).
 */
const ended: ReadableSpan[] = [];
const sink = { onStart: () => undefined, onEnd: (span: never) => void ended.push(span), forceFlush: async () => undefined, shutdown: async () => undefined };
const sampler = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.5) });

beforeAll(() => {
  trace.setGlobalTracerProvider(new TracerProvider({ sampler, spanProcessors: [sink] }));
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  tracingStarted(async () => undefined, sink);
});

function request(headers: Record<string, string> = {}) {
  const req = { url: '/graphql?x=1', method: 'POST', headers } as unknown as IncomingMessage;
  const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: true }) as unknown as ServerResponse;
  traceRequest(req, res);
  return { span: requestSpanOf(req)!, close: () => void res.emit('close') };
}

test('when requests come without a traceparent, then the ratio sampler decides each as the SDK would, and a sampled one ends with its children under it', async () => {
  ended.length = 0;
  let sampled = 0;
  for (let i = 0; i < 200; i += 1) {
    const { span, close } = request();
    const { traceId, traceFlags } = span.spanContext();
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
    const decision = sampler.shouldSample(ROOT_CONTEXT, traceId, 'POST', 1, {}, []).decision;
    expect(span.isRecording()).toBe(decision === SamplingDecision.RECORD_AND_SAMPLED);
    expect(traceFlags).toBe(span.isRecording() ? TraceFlags.SAMPLED : TraceFlags.NONE);
    if (span.isRecording()) sampled += 1;
    const scope = { span };
    await traceOperation('query', 'Asset', scope, () => traceStatement(scope, 'SELECT 1', async () => 1));
    close();
  }
  // One in two, give or take: 200 requests sample between 60 and 140 (far outside 5 standard deviations otherwise).
  expect(sampled).toBeGreaterThan(60);
  expect(sampled).toBeLessThan(140);
  expect(ended).toHaveLength(3 * sampled);
  const roots = ended.filter((s) => s.name === 'POST');
  expect(roots).toHaveLength(sampled);
  const root = roots[0];
  expect(root.parentSpanContext).toBeUndefined();
  expect(root.attributes).toEqual({ 'http.request.method': 'POST', 'url.path': '/graphql', 'url.scheme': 'http', 'http.response.status_code': 200 });
  const operation = ended.find((s) => s.name === 'query Asset' && s.spanContext().traceId === root.spanContext().traceId)!;
  expect(operation.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
  const statement = ended.find((s) => s.name === 'SELECT' && s.spanContext().traceId === root.spanContext().traceId)!;
  expect(statement.parentSpanContext?.spanId).toBe(operation.spanContext().spanId);
  // The provider's resource and scope, as the SDK's own spans carry them.
  expect((root.resource.attributes as Record<string, unknown>)['telemetry.sdk.language']).toBe('nodejs');
  expect(root.instrumentationScope.name).toBe('nft-marketplace-gateway');
  expect(statement.resource).toBe(root.resource);
});

test("when a request carries a traceparent, then its span continues the caller's trace and follows the caller's sampled flag", () => {
  ended.length = 0;
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const on = request({ traceparent: `00-${traceId}-00f067aa0ba902b7-01`, tracestate: 'vendor=1' });
  expect(on.span.isRecording()).toBe(true);
  expect(on.span.spanContext().traceId).toBe(traceId);
  expect(on.span.spanContext().traceState?.serialize()).toBe('vendor=1');
  on.close();
  expect(ended[0].parentSpanContext).toMatchObject({ traceId, spanId: '00f067aa0ba902b7', isRemote: true });
  const off = request({ traceparent: `00-${traceId}-00f067aa0ba902b7-00` });
  expect(off.span.isRecording()).toBe(false);
  expect(off.span.spanContext().traceId).toBe(traceId);
  off.close();
  expect(ended).toHaveLength(1);
});
