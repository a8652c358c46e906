"""The one model of the code: facts about each file, computed once and read by every rule."""
