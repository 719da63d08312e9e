"""The SillyTavern extension of gmtags (``gmtags/`` here), shipped in the wheel as
``gmtags_sillytavern`` so that ``gmtags sillytavern install`` copies the one that matches the
installed gmtags, offline. The folder's name is no Python name, so it never shadows a module
(``benchmarks/sillytavern`` is the real-UI check's package)."""
