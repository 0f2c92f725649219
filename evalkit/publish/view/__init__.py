"""Evidence you can see: one scored row as typed views (:mod:`.model`), drawn as HTML (:mod:`.html`) or text
(:mod:`.text`); ``evalkit.show`` is :func:`evalkit.publish.view.model.show`. A layer the core never imports."""
