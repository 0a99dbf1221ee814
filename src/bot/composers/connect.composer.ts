import { Injectable } from '@nestjs/common';
import { Composer, InlineKeyboard } from 'grammy';
import { BotAccountsService } from '../bot-accounts.service';
import { CALLBACK_PATTERN } from '../callback-data';
import { type BotContext, formatTime } from '../i18n';
import { botUser } from './from';

/**
 * Connecting: the subscription link to add to a VPN app, the devices that use it, and a button to
 * the link's page (in a browser it shows the apps with buttons that open them: Telegram's own
 * buttons take only web addresses, not `happ://` and the like).
 */
@Injectable()
export class ConnectComposer {
  readonly composer = new Composer<BotContext>();

  constructor(accounts: BotAccountsService) {
    const show = async (ctx: BotContext) => {
      if (!ctx.from) return;
      const view = await accounts.connect(botUser(ctx.from));
      const lines = [ctx.t('connect-title'), view.subscriptionUrl, ''];
      lines.push(ctx.t('connect-devices', { count: view.devices.length, limit: view.deviceLimit }));
      if (view.devices.length === 0) lines.push(ctx.t('connect-no-devices'));
      for (const device of view.devices) {
        const seen = device.lastSeenAt ?? device.lastFetchAt;
        lines.push(
          seen
            ? ctx.t('connect-device', { name: device.name, seen: formatTime(seen) })
            : ctx.t('connect-device-new', { name: device.name }),
        );
      }
      await ctx.reply(lines.join('\n'), {
        link_preview_options: { is_disabled: true },
        reply_markup: new InlineKeyboard()
          .url(ctx.t('button-connect-page'), view.subscriptionUrl)
          .row()
          .url(ctx.t('button-devices'), view.accountUrl),
      });
    };

    this.composer.command('connect', show);
    this.composer.callbackQuery(CALLBACK_PATTERN.connect, async (ctx) => {
      await ctx.answerCallbackQuery();
      await show(ctx);
    });
  }
}
