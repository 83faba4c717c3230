/** Process entry of the Graph simulator (launched by the engine harness; see ../README.md). */
import { runSimulatorMain } from '../common/server';
import { graphSimulator } from './simulator';

runSimulatorMain(graphSimulator);
