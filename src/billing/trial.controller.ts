import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { SubscriptionView } from '../users/dto/user.response';
import { BillingService } from './billing.service';
import { toSubscriptionView } from './dto/invoice.response';
import { Answers } from '../common/openapi/answers';

/** `POST /users/me/trial` lives with billing: it starts a subscription. */
@ApiTags('users')
@Controller('users')
export class TrialController {
  constructor(private readonly billing: BillingService) {}

  @Answers('TRIAL_TELEGRAM_ONLY', 'TRIAL_USED')
  @Post('me/trial')
  @HttpCode(200)
  @ApiOkResponse({
    type: SubscriptionView,
    description: '403 TRIAL_TELEGRAM_ONLY; 409 TRIAL_USED',
  })
  async start(@CurrentUser() caller: AuthUser): Promise<SubscriptionView> {
    return toSubscriptionView(await this.billing.startTrial(caller.id));
  }
}
