"""Tokenizers shared by the metrics: sacrebleu's, MeCab's, rouge-score's, and the Porter stemmer."""
