"""Reports: the value classes every evaluation produces, and their JSON (de)serialisation."""
