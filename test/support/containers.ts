// TEST_INFRA=containers: Kafka, Redis, the schema registry and a ClickHouse server from public images through
// testcontainers, for machines with a Docker engine (none runs on the project's CI
// machines, which use the local path). The service then talks to the ClickHouse server.
import type { Logger } from '../../lib/log.ts';
import type { Started } from '../../ops/infra.ts';

export async function startContainers(log: Logger): Promise<Started & { env: Record<string, string> }> {
  const { GenericContainer, Wait } = await import('testcontainers');
  log.warn('TEST_INFRA=containers: starting Kafka, Redis, schema registry and ClickHouse containers...');
  const kafkaPort = 39092;
  const [redis, kafka, clickhouse, registry] = await Promise.all([
    new GenericContainer('redis:7-alpine').withExposedPorts(6379).withCommand(['redis-server', '--save', '', '--appendonly', 'no']).start(),
    // KRaft single node; the advertised listener must be the port the host sees, so it is fixed.
    new GenericContainer('apache/kafka:4.3.1')
      .withExposedPorts({ container: kafkaPort, host: kafkaPort })
      .withEnvironment({
        KAFKA_NODE_ID: '1',
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_LISTENERS: `PLAINTEXT://0.0.0.0:${kafkaPort},CONTROLLER://0.0.0.0:9093`,
        KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${kafkaPort}`,
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
        KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
      })
      .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
      .start(),
    new GenericContainer('clickhouse/clickhouse-server:25.8')
      .withExposedPorts(8123)
      .withEnvironment({ CLICKHOUSE_USER: 'mm', CLICKHOUSE_PASSWORD: 'mm', CLICKHOUSE_DEFAULT_ACCESS_MANAGEMENT: '1' })
      .withWaitStrategy(Wait.forHttp('/ping', 8123))
      .start(),
    // In-memory storage: the container lives as long as the run.
    new GenericContainer('apicurio/apicurio-registry:3.0.9')
      .withExposedPorts(8080)
      .withWaitStrategy(Wait.forHttp('/apis/ccompat/v7/subjects', 8080))
      .start(),
  ]);
  return {
    name: 'containers',
    env: {
      REDIS_URL: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
      KAFKA_BROKERS: `127.0.0.1:${kafkaPort}`,
      CLICKHOUSE_URL: `http://mm:mm@${clickhouse.getHost()}:${clickhouse.getMappedPort(8123)}`,
      SCHEMA_REGISTRY_URL: `http://${registry.getHost()}:${registry.getMappedPort(8080)}`,
    },
    async stop() {
      await Promise.allSettled([redis.stop(), kafka.stop(), clickhouse.stop(), registry.stop()]);
    },
  };
}
