import {
  type CanActivate,
  Controller,
  Get,
  type INestApplication,
  Injectable,
  Param,
  Post,
  UseGuards,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { InternalSecretGuard } from '../auth/guards/internal-secret.guard';
import { StaffGuard } from '../auth/guards/role.guards';
import { Public } from '../common/public.decorator';
import { UuidPipe } from '../common/validation';
import { Answers } from '../common/openapi/answers';
import { buildOpenApiDocument } from './document';

@Injectable()
class UndocumentedGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

@Controller('things')
class ThingsController {
  @Get(':id')
  @Answers('NOT_FOUND')
  get(@Param('id', UuidPipe) id: string): string {
    return id;
  }

  @Post()
  @UseGuards(StaffGuard)
  @Answers('CONFLICT', 'USERNAME_TAKEN')
  create(): string {
    return 'made';
  }

  @Public()
  @UseGuards(InternalSecretGuard)
  @Get('internal')
  internal(): string {
    return 'ok';
  }

  @Public()
  @Get('open')
  open(): string {
    return 'ok';
  }
}

@Controller('odd')
class OddController {
  @UseGuards(UndocumentedGuard)
  @Get()
  odd(): string {
    return 'odd';
  }
}

async function appWith(controller: new () => unknown): Promise<INestApplication> {
  const module = await Test.createTestingModule({ controllers: [controller] })
    .overrideGuard(InternalSecretGuard)
    .useValue({ canActivate: () => true })
    .compile();
  return module.createNestApplication({ logger: false }).setGlobalPrefix('api');
}

/** Paths as @nestjs/swagger writes them; responses as references into components.responses. */
type Operation = {
  security: unknown;
  responses: Record<string, { $ref?: string }>;
  parameters: { name: string; schema: { format?: string } }[];
};

describe('the OpenAPI document pass', () => {
  it('derives security and error answers from the guards, @Public(), @Answers and ERROR_STATUS', async () => {
    const app = await appWith(ThingsController);
    const document = buildOpenApiDocument(app, 'api');
    const operation = (path: string, method: string) =>
      (document.paths[path] as Record<string, Operation>)[method];
    const statuses = (path: string, method: string) =>
      Object.fromEntries(
        Object.entries(operation(path, method).responses)
          .filter(([status]) => status >= '400')
          .map(([status, answer]) => [status, answer.$ref?.split('/').pop()]),
      );

    expect(operation('/api/things/{id}', 'get').security).toEqual([{ cookie: [] }, { bearer: [] }]);
    expect(statuses('/api/things/{id}', 'get')).toEqual({
      400: 'Error400_VALIDATION_FAILED',
      401: 'Error401_UNAUTHENTICATED',
      403: 'Error403_ACCOUNT_BLOCKED',
      404: 'Error404_NOT_FOUND',
      500: 'Error500_INTERNAL',
      503: 'Error503_UPSTREAM_UNAVAILABLE',
    });
    expect(operation('/api/things/{id}', 'get').parameters[0].schema.format).toBe('uuid');
    expect(statuses('/api/things', 'post')).toEqual({
      400: 'Error400_VALIDATION_FAILED',
      401: 'Error401_UNAUTHENTICATED',
      403: 'Error403_FORBIDDEN_ORIGIN_REJECTED_ACCOUNT_BLOCKED',
      409: 'Error409_CONFLICT_USERNAME_TAKEN',
      413: 'Error413_PAYLOAD_TOO_LARGE',
      415: 'Error415_UNSUPPORTED_MEDIA_TYPE',
      500: 'Error500_INTERNAL',
      503: 'Error503_UPSTREAM_UNAVAILABLE',
    });
    expect(operation('/api/things/internal', 'get').security).toEqual([{ internal: [] }]);
    expect(statuses('/api/things/internal', 'get')).toMatchObject({
      401: 'Error401_INTERNAL_SECRET_INVALID',
    });
    expect(operation('/api/things/open', 'get').security).toEqual([]);
    expect(Object.keys(statuses('/api/things/open', 'get'))).toEqual(['400', '500', '503']);
    await app.close();
  });

  it('refuses a guard that does not say what it checks', async () => {
    const app = await appWith(OddController);
    expect(() => buildOpenApiDocument(app, 'api')).toThrow(
      'guard UndocumentedGuard has no @DocumentedGuard',
    );
    await app.close();
  });
});
