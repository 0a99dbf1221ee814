import { Global, Module } from '@nestjs/common';
import { JobRunRecorder } from '../scheduler/job-run-recorder';
import { BusinessMetrics } from './business-metrics';
import { BusinessMetricsRepository } from './business-metrics.repository';
import { HttpMetrics } from './http-metrics';
import { MetricsServer } from './metrics-server';
import { Metrics } from './metrics.service';

/** Prometheus metrics: the one `Metrics` service every module records through, and its listener. */
@Global()
@Module({
  providers: [
    Metrics,
    // The job runner's ticks, counted by job and outcome.
    { provide: JobRunRecorder, useExisting: Metrics },
    BusinessMetricsRepository,
    BusinessMetrics,
    HttpMetrics,
    MetricsServer,
  ],
  exports: [Metrics, JobRunRecorder, HttpMetrics, MetricsServer],
})
export class MetricsModule {}
