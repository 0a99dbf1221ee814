import {
  type ArgumentMetadata,
  Body,
  Controller,
  HttpCode,
  Injectable,
  type PipeTransform,
  Post,
  UseGuards,
} from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Update } from 'grammy/types';
import { validationFailed } from '../common/errors';
import { Public } from '../common/public.decorator';
import { BotSecretGuard } from './bot-secret.guard';
import { TelegramBot } from './telegram-bot';

/** A Telegram update: any object with a whole `update_id`; the bot reads the rest. */
@Injectable()
class UpdatePipe implements PipeTransform<unknown, Update> {
  transform(value: unknown, _metadata: ArgumentMetadata): Update {
    const id = (value as { update_id?: unknown } | null)?.update_id;
    if (typeof value !== 'object' || value === null || !Number.isSafeInteger(id)) {
      throw validationFailed([{ field: 'update_id', message: 'must be a whole number' }]);
    }
    return value as Update;
  }
}

@ApiTags('bot')
@Controller('bot')
export class BotController {
  constructor(private readonly bot: TelegramBot) {}

  @Post('webhook')
  @Public()
  @UseGuards(BotSecretGuard)
  @HttpCode(200)
  @ApiBody({
    description: 'a Telegram Update',
    schema: {
      type: 'object',
      required: ['update_id'],
      properties: { update_id: { type: 'integer' } },
      additionalProperties: true,
    },
  })
  @ApiOkResponse({ description: 'received; a missing or wrong secret is 401' })
  async webhook(@Body(UpdatePipe) update: Update): Promise<void> {
    await this.bot.receiveWebhookUpdate(update);
  }
}
