"""Episodes on a Ray cluster (`stratagem run --executor ray`): worker actors play, the `stratagem
run` process coordinates and is the only writer of the results directory."""
