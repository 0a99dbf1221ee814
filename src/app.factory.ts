import { type INestApplication, Logger as NestLogger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import cookieParser from 'cookie-parser';
import express, { type ErrorRequestHandler } from 'express';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { errorBody } from './common/error-body';
import { rejectHostileInput } from './common/hostile-input';
import { createValidationPipe } from './common/validation';
import { AppModule, type AppModuleOptions } from './app.module';

export const API_PREFIX = 'api/v1';

/** Builds the whole HTTP application; `main.ts` and the e2e tests both use it. */
export async function createApp(options: AppModuleOptions): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(options), {
    bufferLogs: true,
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
  const { settings } = options;

  app.set('trust proxy', settings.trustProxy);
  app.disable('x-powered-by');
  // Answers are per user (sessions, money): never cached by browsers or proxies, no ETag revalidation.
  app.set('etag', false);
  app.use((_req: express.Request, res: express.Response, next: express.NextFunction) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  app.use(helmet({ contentSecurityPolicy: false }));
  app.use(cookieParser());
  app.use(
    express.json({
      limit: settings.bodyLimit,
      strict: true,
      type: ['application/json', 'application/*+json'],
    }),
  );
  app.use(bodyParserErrors);
  app.use(rejectHostileInput);
  app.enableCors({
    origin: (origin, callback) =>
      callback(null, origin !== undefined && settings.corsOrigins.includes(origin)),
    credentials: true,
  });
  app.setGlobalPrefix(API_PREFIX);
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new AllExceptionsFilter());

  SwaggerModule.setup(`${API_PREFIX}/docs`, app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: `${API_PREFIX}/docs-json`,
  });

  if (!settings.cookieSecure) {
    new NestLogger('Security').warn(
      '!!! COOKIE_SECURE=false: session cookies will be sent over plain HTTP. Never run like this in production. !!!',
    );
  }
  return app;
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('VPN subscription service')
    .setDescription('Accounts, billing, nodes, partners, tickets, game and the proxy interface.')
    .setVersion('1')
    .addCookieAuth('access_token')
    .addBearerAuth()
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Internal-Secret' }, 'internal')
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** Malformed JSON is a 400 and an oversized body a 413, in the contract's body, never an HTML page. */
const bodyParserErrors: ErrorRequestHandler = (
  error: { type?: string; status?: number },
  _req,
  res,
  next,
) => {
  if (!error || typeof error !== 'object' || !('type' in error)) return next(error);
  const status =
    typeof error.status === 'number' && error.status >= 400 && error.status < 500
      ? error.status
      : 400;
  const code =
    status === 413
      ? 'PAYLOAD_TOO_LARGE'
      : status === 415
        ? 'UNSUPPORTED_MEDIA_TYPE'
        : 'VALIDATION_FAILED';
  const message =
    error.type === 'entity.parse.failed'
      ? 'request body is not valid JSON'
      : status === 413
        ? 'request body is too large'
        : 'request body could not be read';
  res.status(status).json(errorBody(status, code, message));
};
