// What other features use of the runners feature.
export { RunnerTagField } from './RunnerTagField';
