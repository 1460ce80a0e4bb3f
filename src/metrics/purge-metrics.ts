// The edge's purges (src/edge/, docs/edge.md) in Prometheus' terms: calls sent, failed, retried, and the time from a
// change's commit to the purge that named it. Made with the app (app.shared.purges) and fed by the instance's purge
// queue; /metrics registers them.
import client from 'prom-client';

/** Seconds from a change to its purge: the goal is well under a second, the bound a few. */
const DELAY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];

export class PurgeMetrics {
  readonly sent = new client.Counter({
    name: 'cds_edge_purges_sent_total',
    help: 'Purge calls the edge accepted (EDGE_PURGE), by provider.',
    labelNames: ['provider'],
    registers: [],
  });
  readonly failed = new client.Counter({
    name: 'cds_edge_purges_failed_total',
    help: 'Purge calls that failed (an error, a refusal, no answer); each is retried until it succeeds.',
    labelNames: ['provider'],
    registers: [],
  });
  readonly retried = new client.Counter({
    name: 'cds_edge_purges_retried_total',
    help: 'Purge calls sent again after a failure.',
    labelNames: ['provider'],
    registers: [],
  });
  readonly delay = new client.Histogram({
    name: 'cds_edge_purge_delay_seconds',
    help: 'Time from the commit of a change to the accepted purge of its tags (first purge).',
    buckets: DELAY_BUCKETS,
    registers: [],
  });

  /** Every metric, for a registry. */
  get all(): client.Metric[] {
    return [this.sent, this.failed, this.retried, this.delay];
  }
}
