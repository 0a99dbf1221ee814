import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { type Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { AppError } from '../errors';
import { DocumentedGuard } from '../openapi/answers';
import { secretsEqual } from '../secrets';

/** The proxy's routes: the `X-Internal-Secret` header must equal INTERNAL_SECRET. */
@Injectable()
@DocumentedGuard({ schemes: ['internal'], errors: ['INTERNAL_SECRET_INVALID'] })
export class InternalSecretGuard implements CanActivate {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  canActivate(context: ExecutionContext): boolean {
    const given = context.switchToHttp().getRequest<Request>().header('x-internal-secret');
    if (!given || !secretsEqual(given, this.settings.internalSecret)) {
      throw new AppError('INTERNAL_SECRET_INVALID', 'missing or wrong X-Internal-Secret');
    }
    return true;
  }
}
