import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { AuthUser } from '../../auth/guards/auth-user';
import { CurrentUser } from '../../auth/guards/current-user.decorator';
import { UuidPipe } from '../../common/validation';
import { DemoPaymentsService } from './demo-payments.service';

/** Development only (DEMO_PAYMENTS=true), so not part of the API's document; 404 otherwise. */
@ApiExcludeController()
@Controller('demo/invoices')
export class DemoPaymentsController {
  constructor(private readonly demo: DemoPaymentsService) {}

  @Post(':id/simulate-payment')
  @HttpCode(204)
  async simulatePayment(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.demo.simulatePayment(caller.id, id);
  }
}
