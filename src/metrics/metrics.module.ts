import { Global, Module } from '@nestjs/common';
import { BusinessMetrics } from './business-metrics';
import { BusinessMetricsRepository } from './business-metrics.repository';
import { HttpMetrics } from './http-metrics';
import { MetricsServer } from './metrics-server';
import { Metrics } from './metrics.service';

/** Prometheus metrics: the one `Metrics` service every module records through, and its listener. */
@Global()
@Module({
  providers: [Metrics, BusinessMetricsRepository, BusinessMetrics, HttpMetrics, MetricsServer],
  exports: [Metrics, HttpMetrics, MetricsServer],
})
export class MetricsModule {}
