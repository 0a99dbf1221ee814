import { NodeAgent } from './agent';
import { jsonLog, reason } from './log';
import { loadAgentSettings, SettingsError } from './settings';

/** `node agent/dist/agent.js`: settings from the environment, one JSON line per event. */
async function main(): Promise<void> {
  let settings;
  try {
    settings = loadAgentSettings(process.env);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    jsonLog(process.env.VPN_NODE_ID ?? '')('settings_invalid', { error: error.message });
    process.exit(1);
  }
  const log = jsonLog(settings.nodeId);
  const agent = new NodeAgent(settings, log);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log('stopping', { signal });
    agent.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log('stop_failed', { error: reason(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    await agent.start();
  } catch (error) {
    log('start_failed', { error: reason(error) });
    process.exit(1);
  }
}

void main();
