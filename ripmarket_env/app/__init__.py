"""The application on top of the zoo: the ``ripmarket`` command line (``cli``), terminal
play (``play``), the web server (``server``), the demo, benchmarks and docs generation.
It may import every other layer; nothing below imports it."""
