"""The learned extractor: a small trained model over the packaged MiniLM's sentence vectors.

statements.py cuts the messages into candidate statements (the user's sentences, and the
agent's where the user answered them); features.py turns each into a vector (its embedding,
its neighbours', a few shape features); model.py is the trained model (numpy, weights in
model.npz) deciding memorable or not, the kind, persona or workspace and a calibrated
confidence; phrasing.py turns the kept statements into standalone memories; extractor.py
puts it together. train.py and corpus.py train it on extraction/corpus/ (`make
train-extractor`).
"""

from __future__ import annotations

from memvet.extraction.learned.extractor import LearnedExtractor
from memvet.extraction.learned.model import DEFAULT_MODEL_PATH, ExtractorModel

__all__ = ["DEFAULT_MODEL_PATH", "ExtractorModel", "LearnedExtractor"]
