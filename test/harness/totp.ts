import { authenticator } from 'otplib';
import { TOTP_PERIOD_MS as STEP_MS } from '../../src/auth/totp.service';

/**
 * A code of `secret` for the time step before the current one, which the service takes (it takes
 * the current step and the one before) for as long as the current step lasts: so that a sign-in
 * right after can use the current code, still unused. Asked within `marginMs` of the step's end,
 * it waits for the next step first, so that the request carrying the code cannot cross into a step
 * where it is two behind (and refused).
 */
export async function previousStepCode(secret: string, marginMs = 5_000): Promise<string> {
  const left = STEP_MS - (Date.now() % STEP_MS);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
  return authenticator.clone({ epoch: Date.now() - STEP_MS }).generate(secret);
}
