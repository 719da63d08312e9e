"""A real model at the table: scripted players against a real model server, through
a real ``gmtags serve``, with figures of what the model wrote and what the stage made of it.

Run it with ``.venv/bin/python benchmarks/model_game.py`` (see ``cli``). The modules: ``players``
(the scripts, which are data in ``players/``, and playing them), ``model_server`` (llama-server
and the packaged models, set up once and cached), ``stage`` (the gmtags serve and replay it plays
through), ``proxy`` (records what the model server was asked and its timings), ``figures`` (every
figure, from the returned text and metadata alone), ``report`` (table and JSON).
"""
