import { Injectable } from '@nestjs/common';

/** The time, as a seam: tests of time-dependent rules (the rate cache) swap it. */
export abstract class Clock {
  abstract now(): number;
}

@Injectable()
export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }
}
