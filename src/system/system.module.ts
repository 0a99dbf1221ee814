import { Global, Module } from '@nestjs/common';
import { Drain } from './drain';
import { SystemController } from './system.controller';
import { SystemService } from './system.service';

@Global()
@Module({ controllers: [SystemController], providers: [SystemService, Drain], exports: [Drain] })
export class SystemModule {}
