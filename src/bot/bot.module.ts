import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { BillingModule } from '../billing/billing.module';
import { DevicesModule } from '../devices/devices.module';
import { PartnersModule } from '../partners/partners.module';
import { UsersModule } from '../users/users.module';
import { BotAccountsService } from './bot-accounts.service';
import { BotSecretGuard } from './bot-secret.guard';
import { BotShopService } from './bot-shop.service';
import { BotController } from './bot.controller';
import { BotRepository } from './bot.repository';
import { BuyComposer } from './composers/buy.composer';
import { ConnectComposer } from './composers/connect.composer';
import { LoginComposer } from './composers/login.composer';
import { PartnerComposer } from './composers/partner.composer';
import { StartComposer } from './composers/start.composer';
import { WarningsComposer } from './composers/warnings.composer';
import { RemindersService } from './reminders.service';
import { TelegramBot } from './telegram-bot';
import { BOT_ENTITIES } from './bot.entities';

/** The Telegram bot: a thin front end over accounts, sign-in, partners and billing. */
@Module({
  imports: [
    TypeOrmModule.forFeature(BOT_ENTITIES),
    UsersModule,
    AuthModule,
    BillingModule,
    PartnersModule,
    DevicesModule,
  ],
  controllers: [BotController],
  providers: [
    BotRepository,
    BotAccountsService,
    BotShopService,
    BotSecretGuard,
    StartComposer,
    LoginComposer,
    BuyComposer,
    PartnerComposer,
    ConnectComposer,
    WarningsComposer,
    TelegramBot,
    RemindersService,
  ],
  exports: [RemindersService],
})
export class BotModule {}
