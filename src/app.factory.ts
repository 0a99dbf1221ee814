import { type INestApplication, Logger as NestLogger, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import cookieParser from 'cookie-parser';
import type { Server } from 'node:http';
import type express from 'express';
import { Logger, PinoLogger } from 'nestjs-pino';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { bodyParsing, sizeInBytes } from './common/body-parsing';
import { quietWiring } from './common/logging';
import { InternalCallers } from './nodes/internal-callers';
import { RoutingController } from './nodes/nodes.controller';
import { JwtStrategy } from './auth/jwt.strategy';
import { type LaneAnswer, signedInLane } from './auth/signed-in-lane';
import { readTrafficReport } from './internal/traffic-report-reader';
import { credentialsLane } from './devices/credentials-lane';
import { CredentialsController } from './devices/devices.controller';
import type { AuthUser } from './auth/guards/auth-user';
import { UsersController } from './users/users.controller';
import { InternalController } from './internal/internal.controller';
import { validateLane } from './internal/validate-lane';
import { trafficLane } from './internal/traffic-lane';
import { refuseClientErrors, requestLog } from './common/request-id';
import { guardBodilessRoutes } from './common/no-body.guard';
import { securityHeaders } from './common/security-headers';
import { watchRequests } from './common/request-watchers';
import { dropInertClsEnhancers } from './database/cls-enhancers';
import { buildOpenApiDocument as buildDocument } from './openapi/document';
import { createValidationPipe } from './common/validation';
import { AppModule, type AppModuleOptions } from './app.module';
import { settingsWarnings } from './config/settings';
import { HttpMetrics } from './metrics/http-metrics';
import { Metrics } from './metrics/metrics.service';
import { Drain } from './system/drain';
import { frontDoor, laneErrors } from './system/front-door';
import { TimedExpressAdapter } from './system/http-server';
import { serveWebApp } from './system/web-app';
import { SUBSCRIPTION_PATH } from './devices/subscription.controller';

export const API_PREFIX = 'api/v1';

const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Builds the whole HTTP application; `main.ts` and the e2e tests both use it. */
export async function createApp(options: AppModuleOptions): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(options),
    new TimedExpressAdapter(options.settings),
    { bufferLogs: true, bodyParser: false },
  );
  app.useLogger(quietWiring(app.get(Logger)));
  const { settings } = options;

  // First, so that every request has an id, a log line, its timing, the drain's count and the
  // security headers, including those refused before routing.
  const rootLogger = () => (settings.logLevel === 'silent' ? undefined : PinoLogger.root);
  const watch = watchRequests([
    requestLog(rootLogger),
    app.get(HttpMetrics).watch,
    app.get(Drain).watch,
    securityHeaders(),
  ]);
  // Refusals Node's HTTP server makes itself (408, 431, not HTTP) get the same body and line.
  (app.getHttpServer() as Server).on('clientError', refuseClientErrors(rootLogger));
  // GET /internal/limits takes up to 1,000 user ids in its query (~37 KB of URL); Node's default
  // cap on the request head is 16 KB.
  (app.getHttpServer() as { maxHeaderSize?: number }).maxHeaderSize = 48 * 1024;
  app.set('trust proxy', settings.trustProxy);
  app.disable('x-powered-by');
  // Answers are per user (sessions, money): never cached by browsers or proxies, no ETag revalidation.
  app.set('etag', false);
  const callers = app.get(InternalCallers);
  const metrics = app.get(Metrics);
  const usersController = app.get(UsersController);
  const routingController = app.get(RoutingController);
  const authentication = app.get(JwtStrategy);
  // Every request is watched and may be answered by a lane before it reaches Express (frontDoor);
  // what a lane passes on with an error is raised there first, as if the lane were a middleware.
  const expressApp = app.getHttpAdapter().getInstance() as express.Express;
  (app.getHttpServer() as Server).removeListener('request', expressApp).on(
    'request',
    frontDoor(expressApp, watch, [
      validateLane({
        path: `/${API_PREFIX}/internal/validate`,
        bodyLimit: sizeInBytes(settings.bodyLimit),
        callers,
        controller: app.get(InternalController),
        answered: () => metrics.validateLaneAnswered(),
      }),
      credentialsLane({
        path: `/${API_PREFIX}/internal/credentials`,
        callers,
        controller: app.get(CredentialsController),
        answered: () => metrics.credentialsLaneAnswered(),
      }),
      signedInLane({
        routes: new Map<string, (caller: AuthUser) => Promise<LaneAnswer>>([
          [`/${API_PREFIX}/users/me`, (caller) => usersController.me(caller)],
          [`/${API_PREFIX}/nodes/routing`, (caller) => routingController.get(caller)],
        ]),
        callerOf: (request) => authentication.callerOf(request),
        answered: (route) => metrics.signedInLaneAnswered(route),
      }),
    ]),
  );
  app.use(laneErrors);
  // The signed-in lane reads only the access cookie, from the header itself.
  app.use(cookieParser());
  // A node's traffic report (up to 10,000 entries) is a large body: its own secret allows one too.
  const isInternalCaller = async (secret: string): Promise<boolean> =>
    (await callers.speaksFor(secret)) !== null;
  // A traffic report plainly as nodes send it is read from its bytes, unparsed (about 900 KB).
  const readReport = (raw: Buffer): object | null => {
    const report = readTrafficReport(raw);
    if (report !== null) metrics.trafficReportRead();
    return report;
  };
  const trafficPath = `/${API_PREFIX}/internal/traffic`;
  const readers = new Map([
    [
      trafficPath,
      {
        read: readReport,
        answer: trafficLane({
          path: trafficPath,
          callers,
          controller: app.get(InternalController),
          answered: () => metrics.trafficLaneAnswered(),
        }),
      },
    ],
  ]);
  for (const handler of bodyParsing(settings, isInternalCaller, readers)) app.use(handler);
  app.enableCors({
    origin: (origin, callback) =>
      callback(null, origin !== undefined && settings.corsOrigins.includes(origin)),
    credentials: true,
  });
  // Outside /api, before the API's routes: the built web app on the same origin.
  serveWebApp(app, settings.webDir, API_PREFIX);
  // Subscription links are served outside the API's prefix (`<SUB_URL>/sub/<token>`).
  app.setGlobalPrefix(API_PREFIX, {
    exclude: [{ path: SUBSCRIPTION_PATH, method: RequestMethod.GET }],
  });
  app.useGlobalPipes(createValidationPipe());
  guardBodilessRoutes(app, API_PREFIX);
  dropInertClsEnhancers(app);
  app.useGlobalFilters(new AllExceptionsFilter());

  if (settings.docsEnabled) {
    // The UI's own scripts and styles only: no inline script, nothing from elsewhere, not framed.
    app.use(
      `/${API_PREFIX}/docs`,
      (_req: express.Request, res: express.Response, next: () => void) => {
        res.setHeader('Content-Security-Policy', DOCS_CSP);
        next();
      },
    );
    SwaggerModule.setup(`${API_PREFIX}/docs`, app, () => buildOpenApiDocument(app), {
      jsonDocumentUrl: `${API_PREFIX}/docs-json`,
    });
  }

  for (const warning of settingsWarnings(settings)) {
    new NestLogger('Security').warn(`!!! ${warning} !!!`);
  }
  return app;
}

/** The document `GET /api/v1/docs-json` serves and `npm run client:types` commits. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  return buildDocument(app, API_PREFIX);
}
