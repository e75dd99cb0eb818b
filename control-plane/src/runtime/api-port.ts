import { ConfigError } from '@petsing/platform/config';

/** A taken PORT: a configuration error (exit 78) naming the setting, as the other ports' are. */
export const apiPortTaken = (host: string, port: number) =>
  new ConfigError([`PORT: port ${port} on ${host} is already in use, so the API cannot listen there. Stop what listens there, or set PORT to a free port.`]);
