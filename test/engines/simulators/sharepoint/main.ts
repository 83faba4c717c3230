/** Entry point the harness launches: `node -r ts-node/register/transpile-only main.ts --port P --dir D --tls-dir T`. */
import { runSimulatorMain } from '../common/server';
import { sharePointSimulator } from './definition';

runSimulatorMain(sharePointSimulator);
