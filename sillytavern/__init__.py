"""The SillyTavern extension of gmtags (``sillytavern/gmtags/``), shipped in the wheel so that
``gmtags sillytavern install`` copies the one that matches the installed gmtags, offline."""
