import { loadAverage } from "./machine";
import { heading as title } from "./report";

/** A section title, with the machine's 1-minute load average when the section's figures were taken. */
export const heading = (text: string) => title(`${text}  [load ${loadAverage().split(" ")[0]}]`);
