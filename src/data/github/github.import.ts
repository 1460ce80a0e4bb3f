// The GitHub part of the dataset import: recorded GitHub REST responses (data/github/) → the GitHub
// tables. The live sync reuses the mappers (github.mapping.ts) and the writer.
export { readGithubData } from './github.read.ts';
export { writeGithubData, type GithubCounts, type GithubReport } from './github.write.ts';
export type { GithubData } from './github.records.ts';
