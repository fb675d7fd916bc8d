import { Metrics } from '../../src/process/metrics';
import { SERVICE_VERSION } from '../../src/process/version';

/** The page's lines for one metric name, labels and value as printed. */
async function samples(metrics: Metrics, name: string): Promise<string[]> {
  const page = await metrics.registry.metrics();
  return page.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe('the metrics of the store and of the build (contract section 12)', () => {
  it('receiver_build_info names the version and the Node it runs on, always 1', async () => {
    expect(await samples(new Metrics(), 'receiver_build_info')).toEqual([
      `receiver_build_info{version="${SERVICE_VERSION}",node="${process.version}"} 1`,
    ]);
  });

  it("group commit's units per batch are a histogram", async () => {
    const metrics = new Metrics();
    for (const units of [1, 3, 16]) metrics.observeBatch(units);
    const lines = await samples(metrics, 'receiver_group_commit_batch_units_bucket');
    expect(lines).toEqual(
      expect.arrayContaining([
        'receiver_group_commit_batch_units_bucket{le="1"} 1',
        'receiver_group_commit_batch_units_bucket{le="4"} 2',
        'receiver_group_commit_batch_units_bucket{le="16"} 3',
      ]),
    );
    expect(await samples(metrics, 'receiver_group_commit_batch_units_sum')).toEqual(['receiver_group_commit_batch_units_sum 20']);
  });

  it("the pool's connections and the LISTEN connection are read as the page renders", async () => {
    const metrics = new Metrics();
    let connections = { inUse: 3, idle: 7, waiting: 0, listening: true };
    metrics.watchStoreConnections(() => connections);
    expect(await samples(metrics, 'receiver_db_pool_connections')).toEqual([
      'receiver_db_pool_connections{state="in_use"} 3',
      'receiver_db_pool_connections{state="idle"} 7',
    ]);
    connections = { inUse: 10, idle: 0, waiting: 4, listening: false };
    expect(await samples(metrics, 'receiver_db_pool_connections')).toEqual([
      'receiver_db_pool_connections{state="in_use"} 10',
      'receiver_db_pool_connections{state="idle"} 0',
    ]);
    expect(await samples(metrics, 'receiver_db_pool_waiting')).toEqual(['receiver_db_pool_waiting 4']);
    expect(await samples(metrics, 'receiver_db_listen_up')).toEqual(['receiver_db_listen_up 0']);
  });
});
